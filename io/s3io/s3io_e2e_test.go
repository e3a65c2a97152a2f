//go:build e2e

package s3io

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// These tests run against a real MinIO that they start with testing/services/minio.sh
// (built from source into the cache on first use: allow go test -timeout 20m).
// When MinIO was already running, or HAADE_KEEP_SERVICES is set, they leave it running;
// otherwise they stop it. They stop and start MinIO in the middle (an outage), so run the
// e2e tier with go test -p 1.

const e2eEndpoint = "http://127.0.0.1:9000"

func minioScript(t *testing.T, arg string) {
	t.Helper()
	script, err := filepath.Abs("../../testing/services/minio.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, arg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("minio.sh %s: %v", arg, err)
	}
}

func startMinIO(t *testing.T) Config {
	t.Helper()
	script, err := filepath.Abs("../../testing/services/minio.sh")
	if err != nil {
		t.Fatal(err)
	}
	wasRunning := exec.Command("bash", script, "status").Run() == nil
	minioScript(t, "start")
	if !wasRunning && os.Getenv("HAADE_KEEP_SERVICES") == "" {
		t.Cleanup(func() { minioScript(t, "stop") })
	}
	return Config{Endpoint: e2eEndpoint, AccessKey: "minioadmin", SecretKey: "minioadmin", Region: "us-east-1"}
}

func randomBucket(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s3io-test-" + hex.EncodeToString(b[:])
}

func TestE2EMinIO(t *testing.T) {
	cfg := startMinIO(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("warehouse bucket made by the script", func(t *testing.T) {
		if err := CheckWritable(ctx, cfg, "warehouse", "checkpoints/bronze"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("EnsureBucket is idempotent", func(t *testing.T) {
		bucket := randomBucket(t)
		cl, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.RemoveBucket(context.Background(), bucket) })

		if err := CheckWritable(ctx, cfg, bucket, ""); !errors.Is(err, ErrNoBucket) {
			t.Fatalf("CheckWritable before the bucket exists: %v, want ErrNoBucket", err)
		}
		for i := range 2 {
			if err := EnsureBucket(ctx, cfg, bucket); err != nil {
				t.Fatalf("EnsureBucket #%d: %v", i+1, err)
			}
		}
		if ok, err := cl.BucketExists(ctx, bucket); err != nil || !ok {
			t.Fatalf("BucketExists = %v, %v", ok, err)
		}
		if err := CheckWritable(ctx, cfg, bucket, "some/prefix"); err != nil {
			t.Fatalf("CheckWritable: %v", err)
		}
		// The probe is gone: the bucket is empty again.
		for obj := range cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
			t.Fatalf("probe left behind: %+v", obj)
		}
	})

	t.Run("wrong secret is access denied", func(t *testing.T) {
		bad := cfg
		bad.SecretKey = "not-the-secret"
		if err := CheckWritable(ctx, bad, "warehouse", ""); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("CheckWritable: %v, want ErrAccessDenied", err)
		}
		if err := EnsureBucket(ctx, bad, "warehouse"); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("EnsureBucket: %v, want ErrAccessDenied", err)
		}
		bad.AccessKey = "nobody"
		if err := CheckWritable(ctx, bad, "warehouse", ""); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("CheckWritable with an unknown key: %v, want ErrAccessDenied", err)
		}
	})

	t.Run("outage keeps the data", func(t *testing.T) {
		cl, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		key := "s3io-e2e/outage-" + randomBucket(t)
		body := "still here"
		if _, err := cl.PutObject(ctx, "warehouse", key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.RemoveObject(context.Background(), "warehouse", key, minio.RemoveObjectOptions{}) })

		minioScript(t, "stop")
		err = CheckWritable(ctx, cfg, "warehouse", "")
		minioScript(t, "start")
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("CheckWritable while stopped: %v, want ErrUnreachable", err)
		}
		if _, err := cl.StatObject(ctx, "warehouse", key, minio.StatObjectOptions{}); err != nil {
			t.Fatalf("object written before the outage: %v", err)
		}
		if err := CheckWritable(ctx, cfg, "warehouse", ""); err != nil {
			t.Fatalf("CheckWritable after the restart: %v", err)
		}
	})

	t.Run("wrong port is unreachable", func(t *testing.T) {
		bad := cfg
		bad.Endpoint = "http://127.0.0.1:9"
		if err := CheckWritable(ctx, bad, "warehouse", ""); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("CheckWritable: %v, want ErrUnreachable", err)
		}
	})
}
