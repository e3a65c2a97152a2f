package runners

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// toolMainEnv makes the test binary a tool whose run prints "ready" and
// its arguments, then waits for its context to end and exits 3.
const toolMainEnv = "HAADE_TEST_TOOLMAIN"

// TestToolMain runs the test binary as such a tool: run gets the process's
// arguments and stdout, SIGTERM cancels its context, and the process exits
// with run's code.
func TestToolMain(t *testing.T) {
	if os.Getenv(toolMainEnv) != "" {
		ToolMain(func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
			fmt.Fprintln(stdout, "ready", strings.Join(args, " "), getenv(toolMainEnv))
			<-ctx.Done()
			return 3
		})
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestToolMain$", "extra")
	cmd.Env = append(os.Environ(), toolMainEnv+"=on")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the tool's first line: %v", err)
	}
	if want := "ready -test.run=^TestToolMain$ extra on\n"; line != want {
		t.Fatalf("the tool printed %q, want %q", line, want)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the tool ended with %v, want exit status 3", err)
	}
}
