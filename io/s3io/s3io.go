// Package s3io does the work around Iceberg's own S3 file IO, through minio-go:
// it checks that a warehouse bucket exists and that the credentials can write to it,
// and it creates the bucket in test kits and in the Kubernetes bucket Job.
//
// Every error it returns is an *Error that names the operation, the endpoint and the
// bucket, and wraps one of the sentinels below, so callers can tell with errors.Is
// whether waiting could help (ErrUnreachable) or a person must act (the others).
package s3io

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Sentinels wrapped by every error of this package.
var (
	// ErrNoBucket: the bucket does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrAccessDenied: the server refused the credentials or the operation.
	ErrAccessDenied = errors.New("access denied")
	// ErrUnreachable: no answer from the endpoint, or it answered that it is not ready
	// (a 5xx). Retrying later may help.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrInvalidConfig: the endpoint or the bucket name is malformed.
	ErrInvalidConfig = errors.New("invalid configuration")
	// ErrRequestFailed: the server refused the request for a reason not covered above.
	ErrRequestFailed = errors.New("request failed")
)

// DefaultRegion is used when neither the Config nor the environment names one.
const DefaultRegion = "us-east-1"

// Config says how to reach an S3-compatible server.
type Config struct {
	// Endpoint is a URL such as http://127.0.0.1:9000 or https://s3.example.com.
	// A bare host:port is taken as http.
	Endpoint  string
	AccessKey string
	SecretKey string
	// Region defaults to us-east-1.
	Region string
}

// ConfigFromEnv returns a Config for endpoint with the credentials of the AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_REGION variables (AWS_DEFAULT_REGION, then us-east-1,
// when AWS_REGION is unset).
func ConfigFromEnv(endpoint string) Config {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = DefaultRegion
	}
	return Config{
		Endpoint:  endpoint,
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		Region:    region,
	}
}

func (c Config) region() string {
	if c.Region == "" {
		return DefaultRegion
	}
	return c.Region
}

// hostAndTLS splits Endpoint into the host:port that minio-go wants and whether to use TLS.
func (c Config) hostAndTLS() (string, bool, error) {
	ep := strings.TrimSpace(c.Endpoint)
	if ep == "" {
		return "", false, errors.New("empty S3 endpoint")
	}
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil {
		return "", false, fmt.Errorf("S3 endpoint %q: %v", c.Endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false, fmt.Errorf("S3 endpoint %q: scheme must be http or https", c.Endpoint)
	}
	if u.Host == "" {
		return "", false, fmt.Errorf("S3 endpoint %q has no host", c.Endpoint)
	}
	if u.Path != "" && u.Path != "/" {
		return "", false, fmt.Errorf("S3 endpoint %q must not have a path", c.Endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// NewClient returns a minio-go client for cfg with path-style addressing (as MinIO and
// iceberg-go with an explicit endpoint use) and no retries of its own: the callers of
// this package decide when to retry, from ErrUnreachable.
func NewClient(cfg Config) (*minio.Client, error) {
	host, secure, err := cfg.hostAndTLS()
	if err != nil {
		return nil, &Error{Op: "connect", Endpoint: cfg.Endpoint, Kind: ErrInvalidConfig, Err: err}
	}
	cl, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       secure,
		Region:       cfg.region(),
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, &Error{Op: "connect", Endpoint: cfg.Endpoint, Kind: ErrInvalidConfig, Err: err}
	}
	return cl, nil
}

// EnsureBucket creates bucket when it does not exist. It is idempotent: an existing
// bucket, including one created concurrently by someone else with the same
// credentials, is success.
func EnsureBucket(ctx context.Context, cfg Config, bucket string) error {
	fail := func(err error) error { return classify("create bucket", cfg.Endpoint, bucket, "", err) }
	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return &Error{Op: "create bucket", Endpoint: cfg.Endpoint, Bucket: bucket, Kind: ErrInvalidConfig, Err: err}
	}
	cl, err := NewClient(cfg)
	if err != nil {
		return withBucket(err, bucket)
	}
	ok, err := cl.BucketExists(ctx, bucket)
	if err != nil {
		return fail(err)
	}
	if ok {
		return nil
	}
	err = cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: cfg.region()})
	if err == nil {
		return nil
	}
	switch errorResponse(err).Code {
	case "BucketAlreadyOwnedByYou":
		return nil
	case "BucketAlreadyExists":
		// Someone created it between our check and our request. It is ours to use
		// only if we can see it.
		if ok, err2 := cl.BucketExists(ctx, bucket); err2 == nil && ok {
			return nil
		}
	}
	return fail(err)
}

// ProbeName is the name, under the prefix, of the object CheckWritable writes and deletes;
// a random suffix keeps concurrent checks apart.
const ProbeName = ".haade-write-probe-"

// CheckWritable proves that cfg's credentials can write to and delete from
// s3://bucket/prefix: it puts a small probe object there and deletes it.
// prefix may be empty; a missing trailing slash is added.
func CheckWritable(ctx context.Context, cfg Config, bucket, prefix string) error {
	prefix = strings.TrimLeft(prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	key := prefix + ProbeName + hex.EncodeToString(suffix[:])

	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return &Error{Op: "check write access", Endpoint: cfg.Endpoint, Bucket: bucket, Key: key, Kind: ErrInvalidConfig, Err: err}
	}
	cl, err := NewClient(cfg)
	if err != nil {
		return withBucket(err, bucket)
	}
	body := "haade write probe\n"
	_, err = cl.PutObject(ctx, bucket, key, strings.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "text/plain"})
	if err != nil {
		return missingCredentials(cfg, classify("check write access (put)", cfg.Endpoint, bucket, key, err))
	}
	if err := cl.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return classify("check write access (delete)", cfg.Endpoint, bucket, key, err)
	}
	return nil
}

// Error is the error type of this package.
type Error struct {
	Op       string // what was being done, e.g. "create bucket"
	Endpoint string
	Bucket   string
	Key      string // the object, when one was involved
	Kind     error  // one of the sentinels
	Err      error  // the underlying error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("s3io: ")
	b.WriteString(e.Op)
	if e.Bucket != "" {
		b.WriteString(" s3://")
		b.WriteString(e.Bucket)
		b.WriteString("/")
		b.WriteString(e.Key)
	}
	if e.Endpoint != "" {
		b.WriteString(" at ")
		b.WriteString(e.Endpoint)
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes both the sentinel and the underlying error to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func withBucket(err error, bucket string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Bucket = bucket
	}
	return err
}

// classify maps a minio-go or transport error onto the sentinels.
func classify(op, endpoint, bucket, key string, err error) error {
	return &Error{Op: op, Endpoint: endpoint, Bucket: bucket, Key: key, Kind: kindOf(err), Err: err}
}

func kindOf(err error) error {
	resp := errorResponse(err)
	switch resp.Code {
	case "NoSuchBucket":
		return ErrNoBucket
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
		"InvalidToken", "ExpiredToken", "AccountProblem", "XMinioInvalidIAMCredentials":
		return ErrAccessDenied
	case "InvalidBucketName":
		return ErrInvalidConfig
	case "XMinioServerNotInitialized", "ServiceUnavailable", "SlowDown", "SlowDownRead", "SlowDownWrite",
		"InternalError", "RequestTimeout":
		return ErrUnreachable
	}
	switch {
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return ErrAccessDenied
	case resp.StatusCode >= 500:
		return ErrUnreachable
	}
	var netErr net.Error
	var urlErr *url.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr), errors.As(err, &netErr), errors.As(err, &urlErr):
		return ErrUnreachable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ErrUnreachable
	}
	if resp.Code == "" && resp.StatusCode == 0 {
		// minio-go reports some transport failures as plain errors.
		msg := err.Error()
		for _, s := range []string{"connection refused", "no such host", "i/o timeout", "connection reset", "EOF"} {
			if strings.Contains(msg, s) {
				return ErrUnreachable
			}
		}
	}
	return ErrRequestFailed
}

// errorResponse finds minio-go's S3 error in err's chain.
func errorResponse(err error) minio.ErrorResponse {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp
	}
	return minio.ErrorResponse{}
}
