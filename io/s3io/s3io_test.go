package s3io

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "ak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sk")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	got := ConfigFromEnv("http://127.0.0.1:9000")
	want := Config{Endpoint: "http://127.0.0.1:9000", AccessKey: "ak", SecretKey: "sk", Region: "us-east-1"}
	if got != want {
		t.Fatalf("ConfigFromEnv = %+v, want %+v", got, want)
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	if r := ConfigFromEnv("x").Region; r != "eu-west-1" {
		t.Fatalf("Region = %q, want eu-west-1", r)
	}
}

func TestEndpointParsing(t *testing.T) {
	for _, tc := range []struct {
		in     string
		host   string
		secure bool
		bad    bool
	}{
		{in: "http://127.0.0.1:9000", host: "127.0.0.1:9000"},
		{in: "http://minio.lakehouse:9000/", host: "minio.lakehouse:9000"},
		{in: "https://s3.example.com", host: "s3.example.com", secure: true},
		{in: "127.0.0.1:9000", host: "127.0.0.1:9000"},
		{in: "", bad: true},
		{in: "s3://warehouse", bad: true},
		{in: "http://host:9000/warehouse", bad: true},
	} {
		host, secure, err := Config{Endpoint: tc.in}.hostAndTLS()
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || host != tc.host || secure != tc.secure {
			t.Errorf("%q: got (%q, %v, %v), want (%q, %v, nil)", tc.in, host, secure, err, tc.host, tc.secure)
		}
	}
}

func TestInvalidConfig(t *testing.T) {
	ctx := context.Background()
	if err := EnsureBucket(ctx, Config{Endpoint: "ftp://x"}, "warehouse"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad endpoint: %v, want ErrInvalidConfig", err)
	}
	if err := CheckWritable(ctx, Config{Endpoint: "http://127.0.0.1:1"}, "Bad_Bucket", ""); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad bucket: %v, want ErrInvalidConfig", err)
	}
}

// s3Error answers every request with an S3 XML error.
func s3Error(status int, code string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>test says %s</Message></Error>`, code, code)
		}
	})
}

func TestErrorClassification(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{http.StatusNotFound, "NoSuchBucket", ErrNoBucket},
		{http.StatusForbidden, "AccessDenied", ErrAccessDenied},
		{http.StatusForbidden, "InvalidAccessKeyId", ErrAccessDenied},
		{http.StatusForbidden, "SignatureDoesNotMatch", ErrAccessDenied},
		{http.StatusServiceUnavailable, "XMinioServerNotInitialized", ErrUnreachable},
		{http.StatusBadRequest, "SomethingElse", ErrRequestFailed},
	} {
		t.Run(tc.code, func(t *testing.T) {
			srv := httptest.NewServer(s3Error(tc.status, tc.code))
			defer srv.Close()
			cfg := Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "b"}
			err := CheckWritable(context.Background(), cfg, "warehouse", "probe")
			if !errors.Is(err, tc.want) {
				t.Fatalf("CheckWritable: %v, want %v", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Bucket != "warehouse" || !strings.HasPrefix(e.Key, "probe/"+ProbeName) {
				t.Fatalf("error does not name the bucket and probe: %#v", e)
			}
			if !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "s3://warehouse/probe/") {
				t.Fatalf("message lacks endpoint or location: %v", err)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := Config{Endpoint: "http://" + addr, AccessKey: "a", SecretKey: "b"}
	if err := EnsureBucket(ctx, cfg, "warehouse"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("EnsureBucket: %v, want ErrUnreachable", err)
	}
	if err := CheckWritable(ctx, cfg, "warehouse", ""); !errors.Is(err, ErrUnreachable) {
		t.Errorf("CheckWritable: %v, want ErrUnreachable", err)
	}
}
