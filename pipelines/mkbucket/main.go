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

	"github.com/haade/haade/internal/flagenv"
	"github.com/haade/haade/io/s3io"
)

// options is mkbucket's command line.
type options struct {
	endpoint, bucket string
	timeout          time.Duration
	check            bool
	user             *userSpec // nil without --user
}

// flags defines mkbucket's flags on fs and returns a func that reads them,
// once fs is parsed.
func flags(fs *flag.FlagSet) func() (options, error) {
	endpoint := fs.String("s3-endpoint", "", "S3 endpoint, e.g. http://127.0.0.1:9000; credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION")
	bucket := fs.String("bucket", "warehouse", "bucket to create")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to keep retrying while the endpoint is unreachable")
	check := fs.Bool("check-writable", true, "also put and delete a probe object")
	user := fs.String("user", "", "also create or update this MinIO user (access key) with a policy for --bucket only (MinIO admin API; the credentials in AWS_* must be an admin's)")
	secretEnv := fs.String("user-secret-env", "PIPELINE_SECRET_ACCESS_KEY", "environment variable that holds the --user's secret key")
	secretFile := fs.String("user-secret-file", "", "file that holds the --user's secret key (instead of --user-secret-env)")
	policy := fs.String("policy", "", "name of the --user's policy (default haade-<bucket>-rw)")
	return func() (options, error) {
		o := options{endpoint: *endpoint, bucket: *bucket, timeout: *timeout, check: *check}
		if o.endpoint == "" {
			return o, errors.New("--s3-endpoint is required")
		}
		if *user == "" {
			return o, nil
		}
		secret, err := readSecret(*secretEnv, *secretFile)
		if err != nil {
			return o, err
		}
		o.user = &userSpec{User: *user, Secret: secret, Policy: *policy, Bucket: *bucket}
		if o.user.Policy == "" {
			o.user.Policy = "haade-" + *bucket + "-rw"
		}
		return o, nil
	}
}

func main() {
	fs := flag.NewFlagSet("mkbucket", flag.ExitOnError)
	opts := flags(fs)
	err := flagenv.Parse(fs, os.Args[1:], os.Getenv)
	var o options
	if err == nil {
		o, err = opts()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(2)
	}
	if err := run(o.endpoint, o.bucket, o.timeout, o.check, o.user); err != nil {
		fmt.Fprintln(os.Stderr, "mkbucket:", err)
		os.Exit(1)
	}
	fmt.Printf("mkbucket: bucket %q is ready at %s\n", o.bucket, o.endpoint)
	if o.user != nil {
		fmt.Printf("mkbucket: user %q has policy %q (bucket %q only)\n", o.user.User, o.user.Policy, o.bucket)
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
