package replay

import (
	"fmt"

	"github.com/llmbench/llmbench/replay/schedule"
)

// Every in-flight request holds a socket, so a worker at concurrency N needs N open files on
// top of a fixed few (the schedule's timers are one per worker, whatever the sessions). Run out,
// and connects fail with EMFILE: the client's fault, which must never pass for the server's.
// So replay raises its soft RLIMIT_NOFILE to the hard limit (coordinator and workers alike),
// starts as many workers as it takes for each one's share to fit (workersForFiles, sharing
// CPUs when there are more than CPUs, up to maxWorkersPerCPU to one), and refuses up front
// a plan whose concurrency even that cannot carry.

// fdOverhead is what a worker holds besides its requests' sockets and timers: stdio, the
// log, the plan, the poller, the dispatchers' timers, idle pooled connections, with margin.
const fdOverhead = 64

// maxWorkersPerCPU bounds how many workers replay pins to one CPU to stay under the
// open-file limit: past it, the run is refused with the limit's message instead.
const maxWorkersPerCPU = 16

// workersForFiles is the fewest workers among which plan concurrency n fits a per-process
// open-file limit (0: no bound, or a limit too small for any count).
func workersForFiles(n int, limit uint64) int {
	per := int64(limit) - fdOverhead
	if n <= 0 || per <= 0 {
		return 0
	}
	return int((int64(n) + per - 1) / per)
}

// fileLimitNeed is the open files the busiest worker of workers needs at plan concurrency
// n (0: no bound, nothing can be said).
func fileLimitNeed(n, workers int) int {
	if n <= 0 || workers <= 0 {
		return 0
	}
	return schedule.Share(n, schedule.Part{Workers: workers}) + fdOverhead
}

// checkFileLimit refuses a run whose busiest worker needs more open files than the limit
// (soft, after raising it to hard) allows; the error says how to raise it.
func checkFileLimit(n, workers int, soft, hard uint64) error {
	need := fileLimitNeed(n, workers)
	if need == 0 || soft == 0 || uint64(need) <= soft {
		return nil
	}
	how := fmt.Sprintf("raise it first (ulimit -n %d)", need)
	if uint64(need) > hard {
		how = fmt.Sprintf("raise the hard limit first (as root: ulimit -Hn %d; or nofile in /etc/security/limits.conf, LimitNOFILE= for a systemd unit)", need)
	}
	return fmt.Errorf("open-file limit: concurrency %d over %d workers needs about %d open files per worker, and the limit is %d (hard limit %d): %s, or spread the load over more workers (--workers)",
		n, workers, need, soft, hard, how)
}
