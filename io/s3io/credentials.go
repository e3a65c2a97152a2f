package s3io

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoCredentials is returned, with ErrAccessDenied, when the server
// refused a request that was sent without credentials: AWS_ACCESS_KEY_ID
// or AWS_SECRET_ACCESS_KEY is not set. The server itself says only
// "Access Denied".
var ErrNoCredentials = errors.New("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")

// missingCredentials names the environment variables to set when err is a
// refusal of a request made without credentials.
func missingCredentials(cfg Config, err error) error {
	if err == nil || !errors.Is(err, ErrAccessDenied) || (cfg.AccessKey != "" && cfg.SecretKey != "") {
		return err
	}
	var missing []string
	if cfg.AccessKey == "" {
		missing = append(missing, "AWS_ACCESS_KEY_ID")
	}
	if cfg.SecretKey == "" {
		missing = append(missing, "AWS_SECRET_ACCESS_KEY")
	}
	return fmt.Errorf("%w (%s unset): %w", ErrNoCredentials, strings.Join(missing, " and "), err)
}
