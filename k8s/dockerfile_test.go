package k8s_test

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd, Args string
	Stage     int // index of the FROM it belongs to
}

func parseDockerfile(t *testing.T) []instruction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	stage, cur := -1, ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur += trimmed
		cmd, args, _ := strings.Cut(cur, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{Cmd: cmd, Args: strings.TrimSpace(args), Stage: stage})
		cur = ""
	}
	return out
}

var pinnedImage = regexp.MustCompile(`^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$`)

// TestDockerfile checks the image statically: base images pinned by tag and
// digest, a static linux/amd64 build, a non-root user, and that the binaries
// the Kubernetes manifests run are the ones it builds.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t)
	stages := map[string]bool{}
	// ARGs before the first FROM may name base images; their defaults must
	// be pinned like a literal image.
	buildArgs := map[string]string{}
	last := -1
	for _, in := range ins {
		if in.Cmd == "ARG" && in.Stage < 0 {
			k, v, _ := strings.Cut(in.Args, "=")
			buildArgs[k] = v
		}
		if in.Cmd != "FROM" {
			continue
		}
		f := strings.Fields(os.Expand(in.Args, func(k string) string { return buildArgs[k] }))
		image := f[0]
		if strings.HasPrefix(image, "--platform=") {
			image = f[1]
		}
		if !stages[image] && !pinnedImage.MatchString(image) {
			t.Errorf("FROM %s: pin the base image by tag and digest (name:tag@sha256:...)", image)
		}
		if strings.Contains(image, ":latest") {
			t.Errorf("FROM %s: latest is not a pin", image)
		}
		if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
			stages[f[len(f)-1]] = true
		}
		last = in.Stage
	}
	if len(stages) == 0 || last < 1 {
		t.Fatal("want a multi-stage build: a named build stage and a final stage")
	}

	user := ""
	env := map[string]string{}
	var builds []string
	for _, in := range ins {
		switch {
		case in.Cmd == "USER" && in.Stage == last:
			user = in.Args
		case in.Cmd == "ENV":
			for _, kv := range strings.Fields(in.Args) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		case in.Cmd == "RUN":
			for _, part := range strings.Split(in.Args, "&&") {
				if i := strings.Index(part, "go build "); i >= 0 {
					builds = append(builds, strings.TrimSpace(part[i:]))
				}
			}
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if uid == "" || uid == "0" || uid == "root" {
		t.Errorf("the final stage runs as %q; want a non-root USER", user)
	}
	for k, v := range map[string]string{"CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": "amd64"} {
		if env[k] != v {
			t.Errorf("ENV %s=%q, want %q (static linux/amd64 binaries)", k, env[k], v)
		}
	}

	// What the image holds: each go build's outputs, under the directory the
	// final stage copies them to.
	produced := map[string]bool{}
	var patterns []string
	for _, b := range builds {
		out, pkgs, _ := parseGoBuild(t, b)
		patterns = append(patterns, pkgs...)
		mains := listMains(t, pkgs)
		if len(mains) == 0 {
			t.Errorf("%q builds no main package", b)
		}
		if strings.HasSuffix(out, "/") {
			for _, m := range mains {
				produced["/opt/haade/"+path.Base(m)] = true
			}
		} else {
			if len(mains) != 1 {
				t.Errorf("%q: -o names one file but builds %d commands", b, len(mains))
			}
			produced["/opt/haade/"+path.Base(out)] = true
		}
	}
	for _, want := range []string{"/opt/haade/bronze", "/opt/haade/mkbucket", "/opt/haade/boot"} {
		if !produced[want] {
			t.Errorf("the image has no %s (it has %v)", want, keys(produced))
		}
	}
	copied := false
	for _, in := range ins {
		copied = copied || (in.Cmd == "COPY" && in.Stage == last && strings.HasSuffix(in.Args, " /opt/haade/"))
	}
	if !copied {
		t.Error("the final stage does not COPY the binaries to /opt/haade/")
	}
	// Every binary a manifest runs must be in the image.
	for _, f := range yamlFiles(t, k8sDir(t)) {
		data, _ := os.ReadFile(f)
		for _, m := range regexp.MustCompile(`/opt/haade/[\w-]+`).FindAllString(string(data), -1) {
			if !produced[m] {
				t.Errorf("%s runs %s, which the Dockerfile does not build", f, m)
			}
		}
	}
	checkDockerignore(t, patterns)

	// Every package the build needs resolves for linux/amd64 without cgo.
	args := append([]string{"list", "-e", "-deps", "-f", "{{with .Error}}{{.}}{{end}}{{range .DepsErrors}}{{.}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = cmdtest.MustRepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	// The exact build the Dockerfile runs, outside Docker. It recompiles the
	// whole dependency tree without cgo (minutes on two cores), so it runs
	// only when asked: HAADE_DOCKERFILE_BUILD=1 go test -run TestDockerfile ./k8s/
	t.Run("cross-compile", func(t *testing.T) {
		if os.Getenv("HAADE_DOCKERFILE_BUILD") == "" {
			t.Skip("set HAADE_DOCKERFILE_BUILD=1 to cross-compile", strings.Join(patterns, " "))
		}
		crossCompile(t, builds)
	})
}

// crossCompile runs the Dockerfile's go build commands outside Docker.
func crossCompile(t *testing.T, builds []string) {
	for _, b := range builds {
		_, pkgs, flags := parseGoBuild(t, b)
		args := append(append(append([]string{"build"}, flags...), "-o", t.TempDir()+"/"), pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = cmdtest.MustRepoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go %s: %v\n%s", strings.Join(args, " "), err, out)
		} else {
			t.Logf("CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go %s: ok", strings.Join(args, " "))
		}
	}
}

// parseGoBuild returns a go build command's -o, its package arguments and
// its other flags.
func parseGoBuild(t *testing.T, cmd string) (out string, pkgs, flags []string) {
	f := strings.Fields(cmd)[2:]
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == "-o":
			out = f[i+1]
			i++
		case f[i] == "-ldflags" || f[i] == "-tags" || f[i] == "-gcflags":
			flags = append(flags, f[i], f[i+1])
			i++
		case strings.HasPrefix(f[i], "-"):
			flags = append(flags, f[i])
		default:
			pkgs = append(pkgs, f[i])
		}
	}
	if out == "" || len(pkgs) == 0 {
		t.Errorf("%q: want -o and package arguments", cmd)
	}
	for i, fl := range flags {
		ld := strings.TrimPrefix(fl, "-ldflags=")
		if fl == "-ldflags" && i+1 < len(flags) {
			ld = flags[i+1]
		}
		if (ld != fl || fl == "-ldflags") && slices.Contains(strings.Fields(strings.Trim(ld, `"'`)), "-s") {
			t.Errorf("%q: -ldflags -s strips the symbol table Beam's Go worker resolves functions with", cmd)
		}
	}
	return out, pkgs, flags
}

// listMains lists the main packages the patterns match, for linux/amd64
// without cgo, as the image is built.
func listMains(t *testing.T, patterns []string) []string {
	t.Helper()
	args := append([]string{"list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = cmdtest.MustRepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// checkDockerignore makes sure the build context keeps what the build
// needs: go.mod, go.sum and the directory of every package of this module
// the binaries import.
func checkDockerignore(t *testing.T, patterns []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), ".dockerignore"))
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	var rules []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			rules = append(rules, strings.TrimSuffix(l, "/"))
		}
	}
	if !slices.Contains(rules, ".git") {
		t.Error(".dockerignore should exclude .git")
	}
	args := append([]string{"list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = cmdtest.MustRepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	need := []string{"go.mod", "go.sum"}
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(cmdtest.MustRepoRoot(t), dir)
		need = append(need, filepath.ToSlash(rel)+"/x.go")
	}
	for _, p := range need {
		for _, r := range rules {
			if ignored(r, p) {
				t.Errorf(".dockerignore rule %q drops %s, which the build needs", r, p)
			}
		}
	}
}

// ignored approximates Docker's matching: a rule matches a path or any of
// its parent directories; "**/" matches any number of directories.
func ignored(rule, p string) bool {
	parts := strings.Split(p, "/")
	for i := 1; i <= len(parts); i++ {
		prefix := strings.Join(parts[:i], "/")
		if ok, _ := path.Match(rule, prefix); ok {
			return true
		}
		if rest, ok := strings.CutPrefix(rule, "**/"); ok {
			if m, _ := path.Match(rest, parts[i-1]); m {
				return true
			}
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
