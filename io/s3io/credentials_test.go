package s3io

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A server that refuses anonymous requests, as MinIO and S3 do, says only
// "Access Denied": the error must name the variables to set.
func TestMissingCredentialsNameTheVariables(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		cfg      Config
		want     []string
		wantHint bool
	}{
		{"none", Config{Endpoint: srv.URL}, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}, true},
		{"no secret", Config{Endpoint: srv.URL, AccessKey: "ak"}, []string{"(AWS_SECRET_ACCESS_KEY unset)"}, true},
		{"both set", Config{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk"}, []string{"access denied"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWritable(context.Background(), tc.cfg, "warehouse", "")
			if !errors.Is(err, ErrAccessDenied) {
				t.Fatalf("err = %v, want ErrAccessDenied", err)
			}
			if got := errors.Is(err, ErrNoCredentials); got != tc.wantHint {
				t.Errorf("errors.Is(err, ErrNoCredentials) = %v, want %v: %v", got, tc.wantHint, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
