package cmdtest

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestBuildNamesBinariesAfterPackages(t *testing.T) {
	dir := t.TempDir()
	bins, err := Build(dir, "../../pipelines/mkbucket")
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 1 || !strings.HasSuffix(bins[0], "/mkbucket") {
		t.Fatalf("Build = %v, want one path ending in /mkbucket", bins)
	}
	out, _ := exec.Command(bins[0], "--help").CombinedOutput()
	if !strings.Contains(string(out), "Usage") && !strings.Contains(string(out), "usage") {
		t.Errorf("%s --help printed %q: not the built command", bins[0], out)
	}
	if _, err := Build(dir, "./no/such/package"); err == nil || !strings.Contains(err.Error(), "go build ./no/such/package") {
		t.Errorf("Build of a missing package: %v, want an error naming it", err)
	}
}

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "%d-%d\n", i, j)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Errorf("%d lines, want 800", n)
	}
}
