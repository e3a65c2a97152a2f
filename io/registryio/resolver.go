package registryio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Resolver resolves schema ids through the registry, with a cache: each id
// is asked for once per Resolver, and the subject's latest version once per
// Config.LatestTTL. It is safe for concurrent use.
type Resolver struct {
	cfg Config
	cl  *sr.Client

	mu        sync.Mutex
	byID      map[int]*Schema
	bad       map[int]error // ids whose schema is not a JSON Schema: permanent
	latest    *Schema
	latestAt  time.Time
	sleep     func(context.Context, time.Duration) error
	onRetry   func(what string, err error)
	lookupsOK int
}

// NewResolver opens a client for cfg.URL. It makes no request.
func NewResolver(cfg Config) (*Resolver, error) {
	cfg = cfg.withDefaults()
	opts := []sr.ClientOpt{sr.URLs(cfg.URL), sr.UserAgent("haade"),
		sr.HTTPClient(&http.Client{Timeout: 10 * time.Second})}
	if cfg.User != "" {
		p, err := cfg.password()
		if err != nil {
			return nil, err
		}
		opts = append(opts, sr.BasicAuth(cfg.User, p))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRegistry, Redact(cfg.URL), err)
	}
	return &Resolver{cfg: cfg, cl: cl, byID: map[int]*Schema{}, bad: map[int]error{}, sleep: sleepCtx,
		onRetry: func(what string, err error) {
			slog.Warn("schema registry: retrying", "lookup", what, "url", Redact(cfg.URL), "err", err)
		}}, nil
}

// Client is the underlying pkg/sr client (for registering schemas).
func (r *Resolver) Client() *sr.Client { return r.cl }

// ByID returns the compiled schema of id. While the registry is away or
// does not know id, it retries for Config.Wait, then returns an error that
// wraps ErrRegistry (and ErrUnknownSchema for an unknown id). A schema that
// is not a JSON Schema is an error wrapping ErrNotJSONSchema, at once.
func (r *Resolver) ByID(ctx context.Context, id int) (*Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	bad := r.bad[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	if bad != nil {
		return nil, bad
	}
	var got sr.Schema
	err := r.retry(ctx, fmt.Sprintf("schema id %d", id), func(ctx context.Context) (err error) {
		got, err = r.cl.SchemaByID(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if got.Type != sr.TypeJSON {
		err := fmt.Errorf("%w: schema id %d is %s", ErrNotJSONSchema, id, got.Type)
		r.mu.Lock()
		r.bad[id] = err
		r.mu.Unlock()
		return nil, err
	}
	s, err = Compile(id, got.Schema)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad[id] = err
		return nil, err
	}
	r.byID[id] = s
	return s, nil
}

// Latest returns the latest version of Config.Subject, asked for again
// after Config.LatestTTL. When the refresh fails, the version it has is
// kept; without one, it retries as ByID does.
func (r *Resolver) Latest(ctx context.Context) (*Schema, error) {
	r.mu.Lock()
	s, at := r.latest, r.latestAt
	r.mu.Unlock()
	if s != nil && time.Since(at) < r.cfg.LatestTTL {
		return s, nil
	}
	var got sr.SubjectSchema
	fetch := func(ctx context.Context) (err error) {
		got, err = r.cl.SchemaByVersion(ctx, r.cfg.Subject, -1)
		return err
	}
	var err error
	if s != nil {
		err = fetch(ctx)
	} else {
		err = r.retry(ctx, "latest version of "+r.cfg.Subject, fetch)
	}
	if err != nil {
		if s != nil {
			r.mu.Lock()
			r.latestAt = time.Now() // ask again after another TTL
			r.mu.Unlock()
			return s, nil
		}
		return nil, err
	}
	if got.Type != sr.TypeJSON {
		return nil, fmt.Errorf("%w: the latest version of %s is %s", ErrNotJSONSchema, r.cfg.Subject, got.Type)
	}
	ns, err := Compile(got.ID, got.Schema.Schema)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.latest, r.latestAt = ns, time.Now()
	r.byID[got.ID] = ns
	r.mu.Unlock()
	return ns, nil
}

// retry calls fn until it succeeds, fails for good, or Config.Wait has
// passed since the first try.
func (r *Resolver) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(r.cfg.Wait)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			r.mu.Lock()
			r.lookupsOK++
			r.mu.Unlock()
			return nil
		}
		unknown, permanent := classify(err)
		if permanent {
			return fmt.Errorf("%w: %s at %s: %v", ErrRegistry, what, Redact(r.cfg.URL), err)
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			if unknown {
				return fmt.Errorf("%w: %w: %s at %s, still after %v: %v", ErrRegistry, ErrUnknownSchema, what, Redact(r.cfg.URL), r.cfg.Wait, err)
			}
			return fmt.Errorf("%w: %s at %s: gave up after %d tries in %v: %v", ErrRegistry, what, Redact(r.cfg.URL), attempt, r.cfg.Wait, err)
		}
		if attempt == 1 || attempt%10 == 0 {
			r.onRetry(what, err)
		}
		if err := r.sleep(ctx, backoff); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrRegistry, what, err)
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// classify tells an unknown id or subject (retried: the registry may be
// behind the producer) and a refusal for good (bad credentials, a bad
// request) from the rest, which is retried.
func classify(err error) (unknown, permanent bool) {
	var re *sr.ResponseError
	if !errors.As(err, &re) {
		return false, false // connection refused, reset, timeout
	}
	switch {
	case re.StatusCode == http.StatusNotFound:
		return true, false
	case re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden:
		return false, true
	case re.StatusCode >= 500 || re.StatusCode == http.StatusTooManyRequests || re.StatusCode == http.StatusRequestTimeout:
		return false, false
	default:
		return false, true
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Register registers a JSON Schema under subject, retrying as ByID does
// while the registry is away, and returns its id (the existing id when the
// subject already has this schema).
func Register(ctx context.Context, r *Resolver, subject, text string) (int, error) {
	var got sr.SubjectSchema
	err := r.retry(ctx, "register a schema under "+subject, func(ctx context.Context) (err error) {
		got, err = r.cl.CreateSchema(ctx, subject, sr.Schema{Schema: text, Type: sr.TypeJSON})
		return err
	})
	return got.ID, err
}
