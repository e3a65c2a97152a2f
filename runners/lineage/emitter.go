package lineage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// ErrURL is returned by Open and ParseURL for a --lineage value that is not
// a file:/// or http(s):// URL, or a file that cannot be opened for append.
var ErrURL = errors.New("bad URL")

// DefaultTimeout is Timeout's default.
const DefaultTimeout = 10 * time.Second

// Option configures an Emitter.
type Option func(*Emitter)

// Timeout bounds how long an HTTP endpoint may hold up a run: each event is
// retried with backoff for at most this long, and Close waits at most this
// long for the events still queued. Default DefaultTimeout.
func Timeout(d time.Duration) Option { return func(e *Emitter) { e.timeout = d } }

// HTTPClient sends the events of an http(s) URL. Default: a client with a
// 5 s timeout per request.
func HTTPClient(c *http.Client) Option { return func(e *Emitter) { e.client = c } }

// APIKey sends "Authorization: Bearer key" with every POST, as the
// OpenLineage HTTP transport's api_key does. Default: none. The key is never
// logged.
func APIKey(key string) Option { return func(e *Emitter) { e.apiKey = key } }

// Logger receives the warnings about events that could not be delivered.
// Default slog.Default().
func Logger(l *slog.Logger) Option { return func(e *Emitter) { e.log = l } }

// Emitter sends run events to one destination. The zero value and nil are
// off: every method does nothing.
type Emitter struct {
	timeout time.Duration
	client  *http.Client
	apiKey  string
	log     *slog.Logger

	target string // the URL, redacted, for log lines

	fileMu sync.Mutex
	file   *os.File // file:// destinations

	endpoint string          // http(s):// destinations
	queue    chan queued     // the sender's input
	ctx      context.Context // cancelled by Close when its wait is over
	cancel   context.CancelFunc
	sent     chan struct{} // closed by the sender when the queue is done
	mu       sync.Mutex    // guards closed
	closed   bool
	send     func([]byte) error // tests replace it (file and HTTP set it)
}

type queued struct {
	body []byte
	kind EventType
}

// ParseURL checks a --lineage value: empty (off), file:///absolute/path, or
// http(s)://host[:port]/path.
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL, credentials and all
		}
		return nil, fmt.Errorf("%w: not a URL: %v", ErrURL, err)
	}
	switch u.Scheme {
	case "file":
		if (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") || strings.HasSuffix(u.Path, "/") {
			return nil, fmt.Errorf("%w: want file:///absolute/path/events.ndjson", ErrURL)
		}
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("%w: want %s://host[:port]/api/v1/lineage", ErrURL, u.Scheme)
		}
	default:
		return nil, fmt.Errorf("%w: want file:///path/events.ndjson or http(s)://host/api/v1/lineage", ErrURL)
	}
	return u, nil
}

// Open returns an emitter for raw: "" (off), file:///path (appends one JSON
// event per line; the file is created if missing) or http(s)://... (POSTs
// each event). Close it when the run is over.
func Open(raw string, opts ...Option) (*Emitter, error) {
	u, err := ParseURL(raw)
	if err != nil || u == nil {
		return nil, err
	}
	e := &Emitter{timeout: DefaultTimeout, log: slog.Default(), target: redactURL(u)}
	for _, o := range opts {
		o(e)
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if u.Scheme == "file" {
		f, err := os.OpenFile(u.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrURL, err)
		}
		e.file = f
		e.send = e.appendLine
		return e, nil
	}
	if e.client == nil {
		e.client = &http.Client{Timeout: 5 * time.Second}
	}
	e.endpoint = u.String()
	e.send = e.post
	e.queue = make(chan queued, 64)
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.sent = make(chan struct{})
	go e.sender()
	return e, nil
}

// emit sends one event: a file gets it at once; an HTTP endpoint gets it
// from the background sender, in order. It never blocks for long and never
// fails: what cannot be delivered is logged.
func (e *Emitter) emit(ev RunEvent) {
	if e == nil || e.send == nil {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		e.log.Warn("lineage event not encoded", "event", ev.EventType, "err", err)
		return
	}
	if e.queue == nil {
		if err := e.send(b); err != nil {
			e.log.Warn("lineage event not written", "to", e.target, "event", ev.EventType, "err", err)
		}
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.log.Warn("lineage event after Close, dropped", "event", ev.EventType)
		return
	}
	select {
	case e.queue <- queued{body: b, kind: ev.EventType}:
	default:
		e.log.Warn("lineage queue full: event dropped", "to", e.target, "event", ev.EventType)
	}
}

func (e *Emitter) appendLine(b []byte) error {
	e.fileMu.Lock()
	defer e.fileMu.Unlock()
	// One write per event: with O_APPEND, lines of several processes
	// sharing the file do not interleave.
	_, err := e.file.Write(append(b, '\n'))
	return err
}

// sender delivers the queue in order, each event with retries for at most
// the timeout, until Close's wait is over.
func (e *Emitter) sender() {
	defer close(e.sent)
	for q := range e.queue {
		e.deliver(q)
	}
}

func (e *Emitter) deliver(q queued) {
	deadline := time.Now().Add(e.timeout)
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := e.send(q.body)
		if err == nil {
			return
		}
		if attempt == 1 {
			e.log.Warn("lineage endpoint not reachable; retrying", "to", e.target, "event", q.kind, "err", err)
		}
		if time.Now().Add(wait).After(deadline) {
			e.log.Warn("lineage event not delivered", "to", e.target, "event", q.kind, "attempts", attempt, "err", err)
			return
		}
		select {
		case <-time.After(wait):
		case <-e.ctx.Done():
			e.log.Warn("lineage event not delivered: closing", "to", e.target, "event", q.kind, "attempts", attempt, "err", err)
			return
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// errStatus is an HTTP answer other than 2xx.
type errStatus struct{ code int }

func (e errStatus) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func (e *Emitter) post(b []byte) error {
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.endpoint, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return errStatus{resp.StatusCode}
	}
	return nil
}

// Close flushes the events still queued for an HTTP endpoint, waiting at
// most the timeout (or until ctx is done), and closes a file. It logs what it
// could not deliver; it never fails the run.
func (e *Emitter) Close(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if e.file != nil {
		e.fileMu.Lock()
		defer e.fileMu.Unlock()
		return e.file.Close()
	}
	if e.queue == nil {
		return nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.queue)
	e.mu.Unlock()
	t := time.NewTimer(e.timeout)
	defer t.Stop()
	select {
	case <-e.sent:
		e.cancel()
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	e.cancel() // ends the request in flight and the sender's wait
	<-e.sent
	return nil
}

// redactURL is u for log lines: no user info and no query (an API token
// may hide in either).
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}
