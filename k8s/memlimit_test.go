package k8s_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestGoMemoryLimit: every container that runs the HAADE image under a
// memory limit sets GOMEMLIMIT, Go's soft limit, to 75-90% of it. Without
// it the Go heap grows to twice its live size before a collection (GOGC
// 100), so a worker that reads a backlog peaks above what it needs: bronze
// at 20M events peaked at 1.15 GiB, and at 0.98 GiB with GOMEMLIMIT=896MiB
// at the same rate and CPU (README, "Side by side", memory). The rest of
// the limit is for what the Go runtime does not count: stacks, cgo, the
// binary.
func TestGoMemoryLimit(t *testing.T) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			checked := 0
			eachContainer(t, dir, func(o object, p podTemplate, c corev1.Container) {
				if name, _, _ := splitImage(c.Image); !haadeImages[name] {
					return
				}
				limit, ok := c.Resources.Limits[corev1.ResourceMemory]
				if !ok {
					return
				}
				where := o.id() + " " + p.Where + " container " + c.Name
				checked++
				e, ok := envVar(c, "GOMEMLIMIT")
				if !ok || e.Value == "" {
					t.Errorf("%s: memory limit %s and no GOMEMLIMIT: set it to 75-90%% of the limit, for example %dMiB", where, limit.String(), limit.Value()*9/10>>20)
					return
				}
				// GOMEMLIMIT takes B, KiB, MiB, GiB or TiB; resource
				// quantities take the same suffixes without the B.
				soft, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B"))
				if err != nil {
					t.Errorf("%s: GOMEMLIMIT=%q: %v", where, e.Value, err)
					return
				}
				if r := float64(soft.Value()) / float64(limit.Value()); r < 0.75 || r > 0.9 {
					t.Errorf("%s: GOMEMLIMIT=%s is %.0f%% of the memory limit %s, want 75-90%%", where, e.Value, 100*r, limit.String())
				}
			})
			if checked < 3 {
				t.Errorf("%d HAADE containers with a memory limit, want at least the worker pool, maintain and the submit Job", checked)
			}
		})
	}
}
