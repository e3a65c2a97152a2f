// Package secret reads a password from a worker's environment: the
// variable itself, or a file that another variable names (a mounted
// Kubernetes Secret). It is the one copy of that logic for the io packages
// (kafkaio, icebergio, registryio). RedactURI masks the password of a URI
// for the io packages, the commands and runners/lineage alike, which may
// import no io package.
//
// A password never travels inside a pipeline, so a worker that runs in the
// process that built the pipeline (Prism, Flink LOOPBACK) finds it through
// Export: the process that holds a password from its flags or its code
// exports it under the variable's name, and FromEnv in this process then
// answers with it. Export changes no environment variable: child processes
// and other workers never see it.
//
// A password never appears in an error or a log line of this package: an
// error names the variable and the file, and wraps os.ReadFile's error,
// which holds the path only.
package secret

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// exported holds the passwords exported in this process, by variable name.
var exported sync.Map // string -> string

// Export makes value the password that FromEnv(env, ...) returns in this
// process when the variable env is not set: the process that builds a
// pipeline calls it for each password it holds, and its in-process workers,
// whose configs were serialized without the password, find it. An empty
// value exports nothing; a later value replaces an earlier one, as the
// pipeline built last is the one about to run.
func Export(env, value string) {
	if value != "" {
		exported.Store(env, value)
	}
}

// Forget removes what Export put under env. For tests.
func Forget(env string) { exported.Delete(env) }

// FromEnv returns the value of the environment variable env when it is set
// and not empty; else the value exported under env in this process; else,
// when fileEnv is set, the content of the file it names with trailing white
// space (a newline, "\r\n", spaces, tabs) trimmed; else "". A file that
// cannot be read is an error of the form "FILEENV: open PATH: ...", and the
// password is "".
//
// The variable and the export win over the file, so that a process that
// exported the password for workers in the same process is not overridden
// by a file meant for remote workers.
func FromEnv(env, fileEnv string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	if v, ok := exported.Load(env); ok {
		return v.(string), nil
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
