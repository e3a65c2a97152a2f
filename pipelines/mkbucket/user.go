package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/haade/haade/io/s3io"
	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// userSpec is the least-privilege MinIO user that mkbucket makes for the
// pipelines: its own access key, with one policy that allows the bucket
// and nothing else.
type userSpec struct {
	User   string // access key
	Secret string // secret key; never printed
	Policy string // name of the canned policy, default haade-<bucket>-rw
	Bucket string
}

// bucketPolicy is an IAM policy for what HAADE's commands do in one
// bucket: list it, and get, put and delete objects (multipart uploads
// included). No bucket-level administration, no other bucket.
func bucketPolicy(bucket string) []byte {
	type stmt struct {
		Effect   string
		Action   []string
		Resource []string
	}
	p := struct {
		Version   string
		Statement []stmt
	}{"2012-10-17", []stmt{
		{"Allow", []string{"s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"},
			[]string{"arn:aws:s3:::" + bucket}},
		{"Allow", []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"},
			[]string{"arn:aws:s3:::" + bucket + "/*"}},
	}}
	b, _ := json.Marshal(p)
	return b
}

// ensureUser creates or updates the user, its policy and the attachment,
// with the admin credentials of admin (MinIO's root user, or one allowed
// admin:CreateUser and admin:CreatePolicy), then proves that the user can
// write to the bucket. It is idempotent.
func ensureUser(ctx context.Context, admin s3io.Config, u userSpec) error {
	ep := admin.Endpoint
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	eu, err := url.Parse(ep)
	if err != nil || eu.Host == "" {
		return fmt.Errorf("--s3-endpoint %q: not a URL", admin.Endpoint)
	}
	adm, err := madmin.NewWithOptions(eu.Host, &madmin.Options{
		Creds:  credentials.NewStaticV4(admin.AccessKey, admin.SecretKey, ""),
		Secure: eu.Scheme == "https",
	})
	if err != nil {
		return fmt.Errorf("admin client: %v", err)
	}
	if err := adm.AddCannedPolicy(ctx, u.Policy, bucketPolicy(u.Bucket)); err != nil {
		return fmt.Errorf("create policy %q: %w", u.Policy, adminErr(err))
	}
	if err := adm.AddUser(ctx, u.User, u.Secret); err != nil {
		return fmt.Errorf("create user %q: %w", u.User, adminErr(err))
	}
	_, err = adm.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{u.Policy}, User: u.User})
	if err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminPolicyChangeAlreadyApplied" {
		return fmt.Errorf("attach policy %q to user %q: %w", u.Policy, u.User, adminErr(err))
	}
	as := admin
	as.AccessKey, as.SecretKey = u.User, u.Secret
	if err := s3io.CheckWritable(ctx, as, u.Bucket, ""); err != nil {
		return fmt.Errorf("user %q: %w", u.User, err)
	}
	return nil
}

// errUnreachableAdmin marks an admin call that never reached the server,
// so the caller retries it like the bucket calls.
var errUnreachableAdmin = errors.New("admin API unreachable")

// adminErr keeps the server's code and message of an admin API error, and
// marks transport failures (no HTTP answer) as retryable.
func adminErr(err error) error {
	r := madmin.ToErrorResponse(err)
	if r.Code != "" {
		return fmt.Errorf("%s: %s", r.Code, r.Message)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%w: %v", errUnreachableAdmin, err)
	}
	return err
}
