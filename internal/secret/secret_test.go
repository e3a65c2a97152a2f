package secret

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	envPW   = "HAADE_TEST_SECRET_PASSWORD"
	envFile = "HAADE_TEST_SECRET_PASSWORD_FILE"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromEnv(t *testing.T) {
	file := writeFile(t, "from-file \t\r\n\n")
	tests := []struct {
		name      string
		env, path string // "" leaves the variable unset
		want      string
	}{
		{"neither set", "", "", ""},
		{"the variable", "from-env", "", "from-env"},
		{"the variable wins over the file", "from-env", file, "from-env"},
		{"the file, trailing white space trimmed", "", file, "from-file"},
		{"leading white space is kept", "", writeFile(t, "  pw\n"), "  pw"},
		{"an empty file is an empty password", "", writeFile(t, ""), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envPW, tc.env)
			t.Setenv(envFile, tc.path)
			got, err := FromEnv(envPW, envFile)
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if got != tc.want {
				t.Errorf("FromEnv = %q, want %q", got, tc.want)
			}
		})
	}
}

// A file that cannot be read is an error that names the variable and the
// path, never a password (not even the one in the variable that is empty
// here, nor the content of another file).
func TestFromEnvUnreadableFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-file")
	t.Setenv(envPW, "")
	t.Setenv(envFile, missing)
	got, err := FromEnv(envPW, envFile)
	if got != "" {
		t.Errorf("FromEnv = %q, want no password", got)
	}
	if err == nil {
		t.Fatal("FromEnv with a missing file: no error")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, envFile+": ") || !strings.Contains(msg, missing) {
		t.Errorf("error %q does not name %s and the path", msg, envFile)
	}

	// A directory: read fails, and the error holds no file content.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inner"), []byte("s3cret-inner"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envFile, dir)
	if _, err := FromEnv(envPW, envFile); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("FromEnv on a directory = %v, want an error without the secret", err)
	}
}

func TestExport(t *testing.T) {
	const env = "HAADE_TEST_EXPORT_PASSWORD"
	t.Setenv(env, "")
	os.Unsetenv(env)
	t.Cleanup(func() { Forget(env) })
	file := writeFile(t, "from-file\n")
	t.Setenv(env+"_FILE", file)

	Export(env, "")
	if got, _ := FromEnv(env, env+"_FILE"); got != "from-file" {
		t.Fatalf("after an empty export FromEnv = %q, want the file's", got)
	}
	Export(env, "first")
	Export(env, "exported")
	if got, _ := FromEnv(env, env+"_FILE"); got != "exported" {
		t.Fatalf("FromEnv = %q, want the last export over the file", got)
	}
	if _, ok := os.LookupEnv(env); ok {
		t.Fatalf("Export set the variable %s", env)
	}
	t.Setenv(env, "from-env")
	if got, _ := FromEnv(env, env+"_FILE"); got != "from-env" {
		t.Fatalf("FromEnv = %q, want the variable over the export", got)
	}
}
