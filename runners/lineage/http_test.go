package lineage

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// An endpoint that fails the first tries gets every event, once, in order,
// with the API key; the warning names the endpoint without its secrets.
func TestHTTPRetriesUntilDelivered(t *testing.T) {
	var mu sync.Mutex
	var got []RunEvent
	var auth []string
	tries := 0
	// The endpoint answers nothing until the gate opens, which the test
	// does once Start has returned (or after 10 s, when Start waited for
	// the endpoint, which fails below).
	gate := make(chan struct{})
	var opened atomic.Bool
	open := sync.OnceFunc(func() { opened.Store(true); close(gate) })
	defer time.AfterFunc(10*time.Second, open).Stop()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries <= 3 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/lineage" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			t.Errorf("%s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			return
		}
		var ev RunEvent
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("body: %v", err)
		}
		got = append(got, ev)
		auth = append(auth, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusCreated) // Marquez answers 201
	}))
	defer srv.Close()

	var logs bytes.Buffer
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/api/v1/lineage?token=t0ken"
	em, err := Open(u, APIKey("api-k3y"), Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	r := em.Start(context.Background(), Job{Name: "silver"}, nil, nil)
	if opened.Load() {
		t.Errorf("Start returned only once the endpoint could answer: it must not wait for it")
	}
	open()
	r.Complete(context.Background(), nil)
	if err := em.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].EventType != Start || got[1].EventType != Complete || got[0].Run.RunID != got[1].Run.RunID {
		t.Fatalf("endpoint got %+v; want START then COMPLETE of one run", got)
	}
	if tries != 5 {
		t.Errorf("%d requests, want 3 refused + 2", tries)
	}
	for _, a := range auth {
		if a != "Bearer api-k3y" {
			t.Errorf("Authorization %q, want the bearer key", a)
		}
	}
	if !strings.Contains(logs.String(), "lineage endpoint not reachable; retrying") || !strings.Contains(logs.String(), "HTTP 503") {
		t.Errorf("no retry warning; logs:\n%s", logs.String())
	}
	for _, secret := range []string{"pa55word", "t0ken", "api-k3y"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the logs show %q:\n%s", secret, logs.String())
		}
	}
}

// roundTripper is an http.RoundTripper of a func.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An endpoint that refuses every connection, or accepts and never answers,
// holds up Start, Fail and Close for at most the timeout, and the lost
// event is logged. The emitter runs in a synctest bubble, on its fake
// clock: the bound is checked exactly, whatever the machine's load, and
// the test takes no real second. The transport stands in for the network
// (a goroutine blocked on a socket would stop the bubble's clock): it
// refuses at once, or waits for the request's cancellation.
func TestHTTPUnreachableIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   roundTripper
	}{
		{"refused", func(*http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}},
		{"hangs", func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs cmdtest.Buffer
				em, err := Open("http://lineage.invalid/api/v1/lineage", Timeout(time.Second), HTTPClient(&http.Client{Transport: tc.rt}),
					Logger(slog.New(slog.NewTextHandler(&logs, nil))))
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				r := em.Start(context.Background(), Job{Name: "gold"}, nil, nil)
				r.Fail(context.Background(), io.ErrUnexpectedEOF, nil)
				em.Close(context.Background())
				if took := time.Since(start); took > time.Second {
					t.Errorf("Start, Fail and Close took %v with a 1s timeout", took)
				}
				if !strings.Contains(logs.String(), "not delivered") {
					t.Errorf("no warning of the lost event; logs:\n%s", logs.String())
				}
			})
		})
	}
}

// The same endpoint refused by the real network stack: the lost event is
// logged (the bound is TestHTTPUnreachableIsBounded's).
func TestHTTPRefusedIsLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	var logs cmdtest.Buffer
	em, err := Open("http://"+addr+"/api/v1/lineage", Timeout(time.Second), Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	r := em.Start(context.Background(), Job{Name: "gold"}, nil, nil)
	r.Fail(context.Background(), io.ErrUnexpectedEOF, nil)
	em.Close(context.Background())
	if !strings.Contains(logs.String(), "not delivered") || !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("no warning of the lost event naming the refusal; logs:\n%s", logs.String())
	}
}
