package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/haade/haade/internal/flagenv"
	"github.com/haade/haade/testing/flagsdoc"
)

func TestFlagsDoc(t *testing.T) {
	fs := flag.NewFlagSet("mkbucket", flag.ContinueOnError)
	flags(fs)
	flagsdoc.Check(t, "mkbucket", fs)
}

// A flag not given takes HAADE_<FLAG>; one given wins; a bad value names
// its flag and variable.
func TestParseEnv(t *testing.T) {
	env := map[string]string{"HAADE_S3_ENDPOINT": "http://minio:9000", "HAADE_BUCKET": "from-env", "HAADE_CHECK_WRITABLE": "false"}
	fs := flag.NewFlagSet("mkbucket", flag.ContinueOnError)
	opts := flags(fs)
	if err := flagenv.Parse(fs, []string{"--bucket=from-flag"}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	o, err := opts()
	if err != nil {
		t.Fatal(err)
	}
	if o.endpoint != "http://minio:9000" || o.bucket != "from-flag" || o.check {
		t.Errorf("got endpoint %q, bucket %q, check-writable %v; want http://minio:9000, from-flag, false", o.endpoint, o.bucket, o.check)
	}

	fs = flag.NewFlagSet("mkbucket", flag.ContinueOnError)
	flags(fs)
	err = flagenv.Parse(fs, nil, func(k string) string { return map[string]string{"HAADE_TIMEOUT": "ten"}[k] })
	if err == nil || !strings.Contains(err.Error(), "--timeout") || !strings.Contains(err.Error(), "$HAADE_TIMEOUT") {
		t.Errorf("HAADE_TIMEOUT=ten: error %v, want one naming --timeout and $HAADE_TIMEOUT", err)
	}

	fs = flag.NewFlagSet("mkbucket", flag.ContinueOnError)
	opts = flags(fs)
	if err := flagenv.Parse(fs, nil, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if _, err := opts(); err == nil || !strings.Contains(err.Error(), "--s3-endpoint") {
		t.Errorf("no endpoint: error %v, want one naming --s3-endpoint", err)
	}
}
