// Command gitserver serves bare git repositories over git's smart HTTP
// protocol, for Argo CD to sync from inside the cluster and for a test to push
// to (.ci/gitops, testing/k8se2e's TestGitOps). It is git's own
// git-http-backend behind net/http/cgi, as git's documentation runs it behind
// a web server: fetches and pushes are git's, and nothing here parses the
// protocol.
//
//	gitserver --listen=:8080 --root=/srv/git --repos=haade.git   (as its pod runs it)
//
// Each repository in --repos is created bare (branch main) when it does not
// exist, with http.receivepack on, so anyone who reaches the port can push:
// it is for a test cluster, without authentication, and keeps its
// repositories on the volume at --root (an emptyDir in
// k8s/argocd-node/git-server.yaml).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve git's smart HTTP protocol on (the pod passes :8080)")
	root := flag.String("root", "/srv/git", "directory holding the bare repositories (GIT_PROJECT_ROOT)")
	repos := flag.String("repos", "haade.git", "comma-separated bare repositories to create under --root when missing")
	backend := flag.String("backend", "/usr/lib/git-core/git-http-backend", "git's CGI program")
	flag.Parse()
	if err := run(*listen, *root, *repos, *backend); err != nil {
		fmt.Fprintln(os.Stderr, "gitserver:", err)
		os.Exit(1)
	}
}

func run(listen, root, repos, backend string) error {
	if _, err := os.Stat(backend); err != nil {
		return fmt.Errorf("--backend: %w (Debian's git package installs it)", err)
	}
	for _, name := range strings.Split(repos, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if strings.Contains(name, "/") || !strings.HasSuffix(name, ".git") {
			return fmt.Errorf("--repos: %q is not a NAME.git", name)
		}
		if err := initBare(filepath.Join(root, name)); err != nil {
			return err
		}
	}
	srv := &http.Server{Addr: listen, Handler: handler(root, backend), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	slog.Info("serving git over HTTP", "listen", listen, "root", root, "repos", repos)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handler serves the repositories under root through git's CGI program, and
// /healthz.
func handler(root, backend string) http.Handler {
	git := &cgi.Handler{
		Path: backend,
		Root: "/",
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.ContentLength < 0 || len(r.TransferEncoding) > 0 {
			// git sends a push larger than its http.postBuffer (1 MiB) chunked, and CGI,
			// Go's included, takes a body of a known length only: spool it to a file.
			body, n, err := spool(r.Body)
			if err != nil {
				slog.Error("git: reading a chunked request body", "path", r.URL.Path, "err", err)
				http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			defer body.Close()
			r.Body, r.ContentLength, r.TransferEncoding = body, n, nil
		}
		git.ServeHTTP(w, r)
		slog.Info("git", "method", r.Method, "path", r.URL.Path, "query", r.URL.RawQuery, "remote", r.RemoteAddr, "took", time.Since(start).Round(time.Millisecond))
	})
	return mux
}

// maxBody bounds a spooled request body: a push of this repository is a few MiB.
const maxBody = 1 << 30

// spooledFile is a request body spooled to a temporary file, removed on Close.
type spooledFile struct{ *os.File }

func (f spooledFile) Close() error {
	err := f.File.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}

// spool copies a body of unknown length into a temporary file and returns it
// rewound, with its length.
func spool(body io.Reader) (io.ReadCloser, int64, error) {
	f, err := os.CreateTemp("", "gitserver-body-*")
	if err != nil {
		return nil, 0, err
	}
	sf := spooledFile{f}
	n, err := io.Copy(f, io.LimitReader(body, maxBody+1))
	if err == nil && n > maxBody {
		err = fmt.Errorf("larger than %d bytes", int64(maxBody))
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		sf.Close()
		return nil, 0, err
	}
	return sf, n, nil
}

// initBare creates a bare repository at dir, branch main, that accepts
// pushes over HTTP; an existing one is left as it is.
func initBare(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil
	}
	for _, args := range [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=main", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	slog.Info("created a bare repository", "dir", dir)
	return nil
}
