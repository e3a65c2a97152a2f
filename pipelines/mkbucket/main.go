// Command mkbucket creates an S3 bucket if it is missing and checks that it can be
// written, retrying while the server is unreachable. The service scripts in
// testing/services and the Kubernetes bucket Job use it.
//
//	AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... mkbucket --s3-endpoint http://127.0.0.1:9000 --bucket warehouse
//
// With --user it also makes a MinIO user for the pipelines, whose only
// policy allows that bucket (list, get, put, delete objects) and no other,
// so that no pipeline needs MinIO's root credentials. The user's secret key
// comes from the environment variable named by --user-secret-env, or from
// --user-secret-file, never from the command line:
//
//	PIPELINE_SECRET_ACCESS_KEY=... mkbucket --s3-endpoint ... --bucket warehouse --user haade-pipeline
//
// That needs MinIO's admin API, which minio-go does not have; it goes
// through github.com/minio/madmin-go, MinIO's own admin client (Apache 2.0).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/haade/haade/io/s3io"
)

func main() {
	endpoint := flag.String("s3-endpoint", os.Getenv("HAADE_S3_ENDPOINT"), "S3 endpoint, e.g. http://127.0.0.1:9000 (env HAADE_S3_ENDPOINT); credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION")
	bucket := flag.String("bucket", "warehouse", "bucket to create")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to keep retrying while the endpoint is unreachable")
	check := flag.Bool("check-writable", true, "also put and delete a probe object")
	user := flag.String("user", "", "also create or update this MinIO user (access key) with a policy for --bucket only (MinIO admin API; the credentials in AWS_* must be an admin's)")
	secretEnv := flag.String("user-secret-env", "PIPELINE_SECRET_ACCESS_KEY", "environment variable that holds the --user's secret key")
	secretFile := flag.String("user-secret-file", "", "file that holds the --user's secret key (instead of --user-secret-env)")
	policy := flag.String("policy", "", "name of the --user's policy (default haade-<bucket>-rw)")
	flag.Parse()
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "mkbucket: --s3-endpoint is required")
		os.Exit(2)
	}
	var u *userSpec
	if *user != "" {
		secret, err := readSecret(*secretEnv, *secretFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkbucket:", err)
			os.Exit(2)
		}
		u = &userSpec{User: *user, Secret: secret, Policy: *policy, Bucket: *bucket}
		if u.Policy == "" {
			u.Policy = "haade-" + *bucket + "-rw"
		}
	}
	if err := run(*endpoint, *bucket, *timeout, *check, u); err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(1)
	}
	fmt.Printf("mkbucket: bucket %q is ready at %s\n", *bucket, *endpoint)
	if u != nil {
		fmt.Printf("mkbucket: user %q has policy %q (bucket %q only)\n", u.User, u.Policy, *bucket)
	}
}

// readSecret returns the --user's secret key from the file, when one is
// named, else from the environment variable.
func readSecret(env, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--user-secret-file: %v", err)
		}
		s := strings.TrimRight(string(b), "\r\n")
		if len(s) < 8 {
			return "", fmt.Errorf("--user-secret-file %s: the secret key must have at least 8 characters", file)
		}
		return s, nil
	}
	s := os.Getenv(env)
	if len(s) < 8 {
		return "", fmt.Errorf("--user needs a secret key of at least 8 characters in $%s (--user-secret-env) or --user-secret-file", env)
	}
	return s, nil
}

func run(endpoint, bucket string, timeout time.Duration, check bool, u *userSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cfg := s3io.ConfigFromEnv(endpoint)
	backoff := 250 * time.Millisecond
	var last error
	for {
		err := s3io.EnsureBucket(ctx, cfg, bucket)
		if err == nil && check {
			err = s3io.CheckWritable(ctx, cfg, bucket, "")
		}
		if err == nil && u != nil {
			err = ensureUser(ctx, cfg, *u)
		}
		if err == nil || !(errors.Is(err, s3io.ErrUnreachable) || errors.Is(err, errUnreachableAdmin)) {
			return err
		}
		if ctx.Err() == nil || last == nil {
			last = err // keep the server's answer, not our own deadline
		}
		if ctx.Err() != nil {
			return fmt.Errorf("gave up after %s: %w", timeout, last)
		}
		fmt.Fprintf(os.Stderr, "mkbucket: %v; retrying in %s\n", err, backoff)
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up after %s: %w", timeout, last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
