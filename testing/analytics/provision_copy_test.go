package analytics

import (
	"bytes"
	"os"
	"testing"
)

// TestDashboardCopyInSync: kustomize reads only files under the
// kustomization's own folder, so k8s/base/analytics carries a copy of the
// dashboard's provisioning script; the two must not drift apart.
func TestDashboardCopyInSync(t *testing.T) {
	a, err := os.ReadFile("../services/superset/provision.py")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../k8s/base/analytics/provision.py")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("k8s/base/analytics/provision.py differs from testing/services/superset/provision.py: copy it over (cp testing/services/superset/provision.py k8s/base/analytics/)")
	}
}
