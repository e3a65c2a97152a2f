// Package secret reads a password from a worker's environment: the
// variable itself, or a file that another variable names (a mounted
// Kubernetes Secret). It is the one copy of that logic for the io packages
// (kafkaio, icebergio, registryio); internal/ keeps it theirs.
//
// A password never appears in an error or a log line of this package: an
// error names the variable and the file, and wraps os.ReadFile's error,
// which holds the path only.
package secret

import (
	"fmt"
	"os"
	"strings"
)

// FromEnv returns the value of the environment variable env when it is set
// and not empty; else, when fileEnv is set, the content of the file it
// names with trailing white space (a newline, "\r\n", spaces, tabs)
// trimmed; else "". A file that cannot be read is an error of the form
// "FILEENV: open PATH: ...", and the password is "".
//
// The variable wins over the file, so that a process that exported the
// password for workers in the same process (Prism, Flink LOOPBACK) is not
// overridden by a file meant for remote workers.
func FromEnv(env, fileEnv string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	f := os.Getenv(fileEnv)
	if f == "" {
		return "", nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", fileEnv, err)
	}
	return strings.TrimRight(string(b), " \t\r\n"), nil
}
