package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBucketPolicyNamesOnlyTheBucket(t *testing.T) {
	var p struct {
		Statement []struct {
			Effect   string
			Action   []string
			Resource []string
		}
	}
	if err := json.Unmarshal(bucketPolicy("warehouse"), &p); err != nil {
		t.Fatal(err)
	}
	var resources, actions []string
	for _, s := range p.Statement {
		if s.Effect != "Allow" {
			t.Errorf("effect %q", s.Effect)
		}
		resources = append(resources, s.Resource...)
		actions = append(actions, s.Action...)
	}
	if diff := cmp.Diff([]string{"arn:aws:s3:::warehouse", "arn:aws:s3:::warehouse/*"}, resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	for _, a := range actions {
		if strings.Contains(a, "*") || strings.HasPrefix(a, "admin:") || a == "s3:DeleteBucket" || a == "s3:PutBucketPolicy" {
			t.Errorf("action %q is more than the pipelines need", a)
		}
	}
}

func TestReadSecret(t *testing.T) {
	t.Setenv("MKBUCKET_TEST_SECRET", "short")
	if _, err := readSecret("MKBUCKET_TEST_SECRET", ""); err == nil || !strings.Contains(err.Error(), "--user-secret-env") {
		t.Errorf("a short secret: %v, want an error naming --user-secret-env", err)
	}
	t.Setenv("MKBUCKET_TEST_SECRET", "long-enough-secret")
	if s, err := readSecret("MKBUCKET_TEST_SECRET", ""); err != nil || s != "long-enough-secret" {
		t.Errorf("readSecret = %q, %v", s, err)
	}
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte("from-a-file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := readSecret("MKBUCKET_TEST_SECRET", f); err != nil || s != "from-a-file-secret" {
		t.Errorf("readSecret(file) = %q, %v", s, err)
	}
	if _, err := readSecret("", filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "--user-secret-file") {
		t.Errorf("a missing file: %v, want an error naming --user-secret-file", err)
	}
}
