//go:build faults

package faults

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/haade/haade/testing/cmdtest"
)

// durableCatalog turns synchronous_commit on for the catalog's role in the
// test PostgreSQL (its scripts run the server with synchronous_commit=off,
// for speed; a role setting is what a non-superuser may change), and
// returns the func that turns it off again. With it off, a crash
// (SIGQUIT) takes back commits the server had acknowledged: bronze's next
// window then commits on a table that lacks the previous one, and those
// rows are lost for a reason that is the server's, not bronze's. A
// production catalog database runs with synchronous_commit on.
func durableCatalog() (restore func(), err error) {
	set := func(sql string) error {
		_, err := cmdtest.Script(root, nil, "postgres", "psql", "-v", "ON_ERROR_STOP=1", "-c", sql)
		return err
	}
	if err := set("ALTER ROLE CURRENT_USER SET synchronous_commit = on"); err != nil {
		return nil, err
	}
	return func() {
		if err := set("ALTER ROLE CURRENT_USER RESET synchronous_commit"); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}, nil
}

// serviceRestarted: the server is stopped cleanly (its script's stop) while
// bronze streams and started again a few seconds later; bronze must catch
// up without a restart, opening its catalog again.
func serviceRestarted(svc string) func(t *testing.T, name string) {
	return func(t *testing.T, name string) {
		c := newCase(t, name, 4)
		c.produce(1000)
		p := c.start()
		c.waitCommits(p, 1, 90*time.Second)
		if _, err := cmdtest.Script(root, nil, svc, "stop"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { startService(t, svc) })
		c.produce(1000) // while it is down
		time.Sleep(5 * time.Second)
		startService(t, svc)
		c.produce(1000)
		if !c.caughtUp(p, 90*time.Second) {
			c.fail("did not catch up within 90 s of %s coming back: %v", svc, c.tally())
		}
		c.note("%d retries logged", retries(p))
		c.stopAndRecover(p)
		c.finish()
	}
}
