//go:build cluster

package k8se2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// The restart alert's test thresholds. In production HaadeFlinkJobRestarting
// wants 3 restarts within 15 minutes, and resolves 15 minutes after the last:
// more than the test has. The test applies k8s/monitoring's rule with one
// restart within 3 minutes instead (restartRules); every other rule runs as it
// is deployed.
const (
	restartWindowProd = "flink_jobmanager_job_numRestarts[15m]"
	restartWindowTest = "flink_jobmanager_job_numRestarts[3m]"
)

var restartThreshold = regexp.MustCompile(`(min_over_time\(flink_jobmanager_job_numRestarts\[3m\]\)) >= 3\b`)

// restartRules rewrites the rendered overlay's HaadeFlinkJobRestarting to the
// test's thresholds, and fails the test if the rule is not found as
// k8s/monitoring/flink-prometheusrule.yaml writes it.
func restartRules(t *testing.T, yaml string) string {
	t.Helper()
	if n := strings.Count(yaml, restartWindowProd); n != 2 {
		t.Fatalf("the rendered overlay has %q %d times, want 2 (HaadeFlinkJobRestarting's max and min)", restartWindowProd, n)
	}
	yaml = strings.ReplaceAll(yaml, restartWindowProd, restartWindowTest)
	if n := len(restartThreshold.FindAllStringIndex(yaml, -1)); n != 1 {
		t.Fatalf("HaadeFlinkJobRestarting's threshold: %d matches of %v, want 1", n, restartThreshold)
	}
	return restartThreshold.ReplaceAllString(yaml, "$1 >= 1")
}

// prom is the node's Prometheus (Prometheus/haade, which the Prometheus
// operator of k8s/operators/prometheus runs as StatefulSet prometheus-haade),
// through its HTTP API at its pod's IP.
type prom struct {
	t *testing.T
	k kube
}

func (p prom) api() (promv1.API, error) {
	ip := p.k.jsonpath("monitoring", "pod/prometheus-haade-0", "{.status.podIP}")
	if ip == "" {
		return nil, fmt.Errorf("pod monitoring/prometheus-haade-0 has no IP")
	}
	c, err := promapi.NewClient(promapi.Config{Address: "http://" + ip + ":9090", Client: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		return nil, err
	}
	return promv1.NewAPI(c), nil
}

// query evaluates an instant query; an error is a string, for waitFor.
func (p prom) query(q string) (model.Vector, string) {
	api, err := p.api()
	if err != nil {
		return nil, err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	v, _, _, err := api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err.Error()
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Sprintf("%s: a %s, not a vector", q, v.Type())
	}
	return vec, vec.String()
}

// ready waits for the operator to say Prometheus/haade is reconciled and
// available, and for Prometheus to answer with both PrometheusRules' groups
// loaded and healthy.
func (p prom) ready(d time.Duration) {
	p.t.Helper()
	waitFor(p.t, p.k, d, "the Prometheus operator reconciled Prometheus/haade, available", func() (bool, string) {
		s := p.k.jsonpath("monitoring", "prometheus/haade",
			`{.status.conditions[?(@.type=="Reconciled")].status} {.status.conditions[?(@.type=="Available")].status} {.status.availableReplicas}`)
		return s == "True True 1", "Reconciled, Available, replicas: " + s
	})
	waitFor(p.t, p.k, d, "Prometheus loaded HAADE's rules", func() (bool, string) {
		api, err := p.api()
		if err != nil {
			return false, err.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		rules, err := api.Rules(ctx, nil)
		if err != nil {
			return false, err.Error()
		}
		var alerts []string
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				if a, ok := r.(promv1.AlertingRule); ok {
					if a.Health != promv1.RuleHealthGood && a.Health != promv1.RuleHealthUnknown {
						return false, fmt.Sprintf("%s: %s %s", a.Name, a.Health, a.LastError)
					}
					alerts = append(alerts, a.Name)
				}
			}
		}
		sort.Strings(alerts)
		want := "HaadeCommitRetriesClimbing HaadeDeadLetterRateHigh HaadeFlinkCheckpointsFailing HaadeFlinkJobNotRunning HaadeFlinkJobRestarting HaadeLagGrowing HaadeNoCommit"
		return strings.Join(alerts, " ") == want, "alerting rules: " + strings.Join(alerts, " ")
	})
}

// series waits for each query to return at least one sample.
func (p prom) series(d time.Duration, checks [][2]string) {
	p.t.Helper()
	for _, c := range checks {
		waitFor(p.t, p.k, d, "Prometheus has "+c[0], func() (bool, string) {
			v, s := p.query(c[1])
			return len(v) > 0, c[1] + " = " + s
		})
	}
}

// alertEvent is one change of an alert's state, as the watch saw it.
type alertEvent struct {
	name  string
	state promv1.AlertState // firing, pending, or inactive
	at    time.Time
}

// alertWatch polls Prometheus's active alerts every 2 s while the test runs
// and keeps each alert's changes of state, so that the test can ask whether an
// alert fired, and resolved, after a point, whatever it was doing then.
type alertWatch struct {
	mu     sync.Mutex
	events []alertEvent
	state  map[string]promv1.AlertState
}

func watchAlerts(t *testing.T, p prom) *alertWatch {
	w := &alertWatch{state: map[string]promv1.AlertState{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			w.poll(ctx, p)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *alertWatch) poll(ctx context.Context, p prom) {
	api, err := p.api()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := api.Alerts(ctx)
	if err != nil {
		return // Prometheus restarting: the next poll sees what changed
	}
	now := map[string]promv1.AlertState{}
	for _, a := range res.Alerts {
		name := string(a.Labels[model.AlertNameLabel])
		if now[name] != promv1.AlertStateFiring {
			now[name] = a.State
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	at := time.Now()
	for name, s := range now {
		if w.state[name] != s {
			w.events = append(w.events, alertEvent{name, s, at})
		}
	}
	for name, s := range w.state {
		if _, ok := now[name]; !ok && s != promv1.AlertStateInactive {
			w.events = append(w.events, alertEvent{name, promv1.AlertStateInactive, at})
			now[name] = promv1.AlertStateInactive
		}
	}
	w.state = now
}

// seen returns when the alert was first seen in state at or after since.
func (w *alertWatch) seen(name string, state promv1.AlertState, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.name == name && e.state == state && !e.at.Before(since) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// history lists every change of state the watch saw, each with its time
// since t0.
func (w *alertWatch) history(t0 time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.events {
		out = append(out, fmt.Sprintf("%v %s %s", e.at.Sub(t0).Round(time.Second), e.name, e.state))
	}
	return out
}

// now is the alert's state at the last poll.
func (w *alertWatch) now(name string) promv1.AlertState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.state[name]; ok {
		return s
	}
	return promv1.AlertStateInactive
}

// wait waits until the alert was seen in state at or after since, and logs
// how long after since that was.
func (w *alertWatch) wait(t *testing.T, k kube, name string, state promv1.AlertState, since time.Time, d time.Duration) {
	t.Helper()
	waitFor(t, k, d, fmt.Sprintf("alert %s %s", name, state), func() (bool, string) {
		at, ok := w.seen(name, state, since)
		if !ok {
			return false, fmt.Sprintf("%s is %s", name, w.now(name))
		}
		return true, fmt.Sprintf("%s %v after the event", state, at.Sub(since).Round(time.Second))
	})
}

// resolved waits until the alert is neither pending nor firing, with the
// watch's last poll after since.
func (w *alertWatch) resolved(t *testing.T, k kube, name string, since time.Time, d time.Duration) {
	t.Helper()
	waitFor(t, k, d, "alert "+name+" resolved", func() (bool, string) {
		if time.Since(since) < 3*time.Second {
			return false, "not polled since the event yet"
		}
		s := w.now(name)
		return s == promv1.AlertStateInactive, fmt.Sprintf("%s is %s, %v after the event", name, s, time.Since(since).Round(time.Second))
	})
}
