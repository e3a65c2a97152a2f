// Command mkbucket creates an S3 bucket if it is missing and checks that it can be
// written, retrying while the server is unreachable. The service scripts in
// testing/services and the Kubernetes bucket Job use it.
//
//	AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... mkbucket --s3-endpoint http://127.0.0.1:9000 --bucket warehouse
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/haade/haade/io/s3io"
)

func main() {
	endpoint := flag.String("s3-endpoint", os.Getenv("HAADE_S3_ENDPOINT"), "S3 endpoint, e.g. http://127.0.0.1:9000 (env HAADE_S3_ENDPOINT); credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION")
	bucket := flag.String("bucket", "warehouse", "bucket to create")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to keep retrying while the endpoint is unreachable")
	check := flag.Bool("check-writable", true, "also put and delete a probe object")
	flag.Parse()
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "mkbucket: --s3-endpoint is required")
		os.Exit(2)
	}
	if err := run(*endpoint, *bucket, *timeout, *check); err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(1)
	}
	fmt.Printf("mkbucket: bucket %q is ready at %s\n", *bucket, *endpoint)
}

func run(endpoint, bucket string, timeout time.Duration, check bool) error {
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
		if err == nil || !errors.Is(err, s3io.ErrUnreachable) {
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
