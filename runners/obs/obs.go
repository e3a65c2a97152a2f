// Package obs holds the process-wide logging and metrics of every HAADE
// pipeline: slog set up once, and one Prometheus registry served on
// --metrics-addr with /metrics, /healthz and /readyz.
package obs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is the registry every HAADE metric registers with.
var Registry = prometheus.NewRegistry()

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// SetupLogging makes slog's default logger write format ("json" or "text")
// to w at info level.
func SetupLogging(w io.Writer, format string) error {
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(w, nil)
	case "text", "":
		h = slog.NewTextHandler(w, nil)
	default:
		return fmt.Errorf("invalid value %q for --log-format: want text or json", format)
	}
	slog.SetDefault(slog.New(h))
	return nil
}

var ready atomic.Bool

// SetReady marks the process ready (or not) for /readyz.
func SetReady(v bool) { ready.Store(v) }

// Serve serves /metrics, /healthz and /readyz on addr until ctx ends. An
// empty addr serves nothing. It returns once the listener is bound, so a
// port already in use is an error at start.
func Serve(ctx context.Context, addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr=%s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	slog.Info("serving metrics", "addr", ln.Addr().String())
	return nil
}
