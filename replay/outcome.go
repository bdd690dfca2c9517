package replay

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/llmbench/llmbench/rawlog"
)

// RunReport replays o until done, Ctrl-C (SIGINT, SIGTERM: stop sending, grace period) or a
// second Ctrl-C (abort in-flight requests), and says the outcome on stderr. Exit status: 0
// complete, 1 failed (or requests failed on the client's own side), 2 bad input, 130
// interrupted. everyFailed says whether its exit status 1 is for a run in which every
// request sent failed (a whole run, whose analysis names the failures: profile judges it as
// any other run).
func RunReport(o *Options, stderr io.Writer) (code int, everyFailed bool) {
	r, err := New(*o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2, false
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	go func() {
		n := 0
		for s := range sig {
			n++
			if n == 1 {
				fmt.Fprintf(stderr, "\nreplay: %v: stopping; in-flight requests get the grace period (again to abort)\n", s)
				r.Stop()
			} else {
				fmt.Fprintf(stderr, "\nreplay: %v: aborting in-flight requests\n", s)
				r.Abort()
			}
		}
	}()
	m, err := r.Run()
	if m == nil {
		// Nothing was run and no run directory left: the output directory was unusable.
		fmt.Fprintln(stderr, err)
		return 2, false
	}
	// The counts of run.json: a response with a status other than 2xx is failed.
	c := m.Counts
	fmt.Fprintf(stderr, "replay: %s: %d planned, %d completed, %d failed, %d cancelled, %d aborted, %d not sent, %d lost; run in %s\n",
		m.Status, c.Planned, c.Completed, c.Failed, c.Cancelled, c.Aborted, c.NotSent, c.Lost, o.OutputDir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1, false
	}
	if m.Status == rawlog.StatusInterrupted {
		return 130, false
	}
	if line := allFailed(c, o.OutputDir); line != "" {
		fmt.Fprintln(stderr, line)
		if cl := clientFailedLine(c); cl != "" {
			fmt.Fprintln(stderr, cl)
		}
		return 1, true
	}
	if line := clientFailedLine(c); line != "" {
		// Last, so that it is the line a reader sees: these failures are this machine's.
		fmt.Fprintln(stderr, line)
		return 1, false
	}
	return 0, false
}

// allFailed is the last line of a run in which no request completed and some failed: it
// measured nothing of the server, so it is a failed run (exit 1), whatever its status says.
// "" for any other run.
func allFailed(c rawlog.Counts, dir string) string {
	if c.Completed > 0 || c.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("replay: FAILED: every request sent failed (%d failed, none completed, of %d planned): nothing of the server was measured; the requests' errors are in %s (analyze %s)",
		c.Failed, c.Planned, dir, dir)
}

// clientFailedLine is replay's last line when requests failed on the client's own side ("":
// none did).
func clientFailedLine(c rawlog.Counts) string {
	if c.ClientFailed == 0 {
		return ""
	}
	return fmt.Sprintf("replay: %d of the %d failed requests failed on the client's side, not the server's (client error: the client ran out of its own resources or got back to its connections too late; analyze names which): this run measures this machine, exit 1",
		c.ClientFailed, c.Failed)
}
