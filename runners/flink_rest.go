package runners

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Flink's REST API (the JobManager's, port 8081 by default): the only place
// that knows whether a Flink job runs. Beam's job server does not: with a
// remote cluster or its embedded one, its Cancel ends its own invocation and
// leaves the Flink job running.

// ErrFlinkREST is returned when Flink's REST API cannot be reached or
// answers with an error.
var ErrFlinkREST = errors.New("runners: Flink REST API")

// FlinkJob is one entry of Flink's GET /jobs/overview.
type FlinkJob struct {
	ID    string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"`
	// Start is the job's start time, in milliseconds since the epoch.
	Start int64 `json:"start-time"`
}

// Active says whether the job runs or will run again: every state but the
// terminal ones (FINISHED, CANCELED, FAILED) and SUSPENDED.
func (j FlinkJob) Active() bool {
	switch j.State {
	case "FINISHED", "CANCELED", "FAILED", "SUSPENDED":
		return false
	}
	return true
}

// FlinkREST is a client of one Flink cluster's REST API.
type FlinkREST struct {
	// Base is the API's URL, e.g. http://127.0.0.1:8081.
	Base string
	// Client defaults to a client with a 10 s timeout.
	Client *http.Client
}

// NewFlinkREST checks base (the --flink-rest flag) and returns its client.
func NewFlinkREST(base string) (*FlinkREST, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: --flink-rest=%q: want http(s)://host:port of the JobManager's REST API", ErrRunner, base)
	}
	return &FlinkREST{Base: strings.TrimRight(base, "/"), Client: &http.Client{Timeout: 10 * time.Second}}, nil
}

func (r *FlinkREST) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, r.Base+path, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFlinkREST, err)
	}
	c := r.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrFlinkREST, method, r.Base+path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %s %s: %s: %s", ErrFlinkREST, method, r.Base+path, resp.Status, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrFlinkREST, method, r.Base+path, err)
	}
	return nil
}

// Get decodes the JSON answer of GET path (for example
// "/jobs/:id/checkpoints") into out, for the endpoints this client has no
// method of its own for. An answer that is not 2xx is an ErrFlinkREST that
// holds the status and the body.
func (r *FlinkREST) Get(ctx context.Context, path string, out any) error {
	return r.do(ctx, http.MethodGet, path, out)
}

// Jobs lists every job the cluster knows (GET /jobs/overview).
func (r *FlinkREST) Jobs(ctx context.Context) ([]FlinkJob, error) {
	var body struct {
		Jobs []FlinkJob `json:"jobs"`
	}
	if err := r.do(ctx, http.MethodGet, "/jobs/overview", &body); err != nil {
		return nil, err
	}
	return body.Jobs, nil
}

// ActiveJobs lists the active jobs that run the Beam job called name.
func (r *FlinkREST) ActiveJobs(ctx context.Context, name string) ([]FlinkJob, error) {
	jobs, err := r.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var out []FlinkJob
	for _, j := range jobs {
		if j.Active() && flinkJobIs(j.Name, name) {
			out = append(out, j)
		}
	}
	return out, nil
}

// flinkJobIs says whether a Flink job name is the Beam job name's. Beam's
// portable runner names the Flink job <name>-<user>-<MMddHHmmss>-<hex>
// (seen with the 2.62 job server: "bronze-root-1201095924-b01cdc8a"). The
// hex is a random int unpadded (Java's Integer.toHexString): 1 to 8 digits,
// e.g. "bronze-9999-1202002343-788196d" in the pod test.
func flinkJobIs(flinkName, name string) bool {
	if flinkName == name {
		return true
	}
	rest, ok := strings.CutPrefix(flinkName, name)
	return ok && beamJobSuffix.MatchString(rest)
}

var beamJobSuffix = regexp.MustCompile(`^-.+-[0-9]{10}-[0-9a-f]{1,8}$`)

// RequestCancel asks Flink to cancel a job (PATCH /jobs/:id?mode=cancel) and
// returns once the request is accepted: the job is then CANCELLING, not yet
// stopped (see Cancel).
func (r *FlinkREST) RequestCancel(ctx context.Context, id string) error {
	return r.do(ctx, http.MethodPatch, "/jobs/"+url.PathEscape(id)+"?mode=cancel", nil)
}

// Cancel cancels a job (RequestCancel) and waits up to wait for it to leave
// the active states.
func (r *FlinkREST) Cancel(ctx context.Context, id string, wait time.Duration) error {
	if err := r.RequestCancel(ctx, id); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		var j FlinkJob
		err := r.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(id), &j)
		if err == nil && !j.Active() {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: job %s still %s %v after the cancel", ErrFlinkREST, id, j.State, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// CancelFlinkJobs cancels every active Flink job that runs the Beam job
// called name on the cluster whose REST API is at restURL, and waits until
// each has stopped. It returns the jobs it cancelled.
func CancelFlinkJobs(ctx context.Context, restURL, name string) ([]FlinkJob, error) {
	r, err := NewFlinkREST(restURL)
	if err != nil {
		return nil, err
	}
	jobs, err := r.ActiveJobs(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if err := r.Cancel(ctx, j.ID, time.Minute); err != nil {
			return jobs, err
		}
	}
	return jobs, nil
}

// LoopbackFlinkRESTs returns the URLs of Flink's REST API on 127.0.0.1 at
// each port of ports, a range in Flink's rest.bind-port syntax ("8081-8089"
// or "8081"). Beam's job server starts a MiniCluster per job, whose REST API
// takes the first free port of its range: these are the places to look for
// it. An empty or malformed range is Flink's default, 8081-8089.
func LoopbackFlinkRESTs(ports string) []string {
	lo, hi := 8081, 8089
	a, b, ok := strings.Cut(strings.TrimSpace(ports), "-")
	if !ok {
		b = a
	}
	l, errL := strconv.Atoi(strings.TrimSpace(a))
	h, errH := strconv.Atoi(strings.TrimSpace(b))
	if errL == nil && errH == nil && 0 < l && l <= h && h <= 65535 {
		lo, hi = l, h
	}
	out := make([]string, 0, hi-lo+1)
	for p := lo; p <= hi; p++ {
		out = append(out, "http://127.0.0.1:"+strconv.Itoa(p))
	}
	return out
}
