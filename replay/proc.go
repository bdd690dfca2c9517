package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/calibrate"
)

// WorkerArg is the hidden subcommand that makes a replay binary run as a worker process:
// the coordinator starts `<binary> __worker` and speaks the worker protocol on its stdin and
// stdout. A program that embeds replay calls WorkerMain when os.Args[1] is WorkerArg.
const WorkerArg = "__worker"

// The worker protocol, one text line per message.
//
//	coordinator -> worker (stdin):  <workerConfig JSON>   first line
//	                                start <unix ns>       begin; the run's clock zero
//	                                stop                  interruption: send nothing new, grace period
//	                                abort                 cut in-flight requests now
//	                                control <seq> <var> <value>  set the release gate (control.go)
//	worker -> coordinator (stdout): calibration <JSON>    self-calibration (rawlog.Calibration), before ready
//	                                ready
//	                                progress <sent> <done> <errors>
//	                                controlled <seq> <run ns>    the gate was set then
//	                                error <message>       why the worker failed, once, as it happens
//	                                memory <bytes>        its peak resident set (VmHWM), just before done
//	                                done <status> <planned> <completed> <failed> <cancelled> <aborted> <not_sent>
//
// done is the worker's last line: status is complete, interrupted or failed, and the counts
// are exact even when the log could not be written. EOF on stdin before the start means
// "abort"; after it, or a failed write to stdout, means the coordinator is gone: the worker
// stops as if interrupted (nothing new, grace period, then abort), writes its not_sent
// records and footer, and ends failed. Worker diagnostics go to stderr, which the
// coordinator passes through.

// WorkerMain runs a worker process: it reads its configuration and commands from stdin and
// reports on stdout. It returns the process exit code.
func WorkerMain(stdin io.Reader, stdout io.Writer) int {
	// A coordinator that dies closes the progress pipe: the next write must fail with EPIPE,
	// which the worker handles, rather than kill it mid-run with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	out := &lineWriter{w: stdout}
	br := bufio.NewReaderSize(stdin, 64<<10)
	line, err := br.ReadString('\n')
	if err != nil && line == "" {
		out.line("error worker: no configuration on stdin")
		return 2
	}
	var cfg workerConfig
	if err := json.Unmarshal([]byte(line), &cfg); err != nil {
		out.line("error worker: bad configuration: " + err.Error())
		return 2
	}
	cmds := make(chan string, 4)
	go func() {
		defer close(cmds)
		for {
			l, err := br.ReadString('\n')
			if l = strings.TrimSpace(l); l != "" {
				cmds <- l
			}
			if err != nil {
				return
			}
		}
	}()
	res, err := runWorkerProcess(cfg, cmds, out)
	if err != nil {
		out.line("error " + oneLine(err.Error()))
		return 1
	}
	c := res.Counts
	if n := peakRSS(); n > 0 {
		out.line("memory " + strconv.FormatInt(n, 10))
	}
	out.line(fmt.Sprintf("done %s %d %d %d %d %d %d %d", res.Status, c.Planned, c.Completed, c.Failed, c.Cancelled, c.Aborted, c.NotSent, c.ClientFailed))
	return 0
}

// runWorkerProcess pins the process, prepares the worker, reports ready, waits for the start
// instant and runs.
func runWorkerProcess(cfg workerConfig, cmds <-chan string, out *lineWriter) (workerResult, error) {
	// A socket per in-flight request: take every file descriptor the hard limit allows
	// (the coordinator checked that it is enough).
	raiseFileLimit()
	if cfg.CPU >= 0 {
		// One CPU, one P: the worker's goroutines never migrate and never run in parallel
		// with each other, so nothing but the kernel competes with a read's timestamp.
		runtime.GOMAXPROCS(1)
		if err := pinToCPU(cfg.CPU); err != nil {
			return workerResult{}, err
		}
	}
	// The hot path allocates nothing, so garbage comes only from setup; a larger GC target
	// keeps the collector from running mid-stream on a worker's single P.
	debug.SetGCPercent(400)
	// Self-calibration, on the pinned CPU, before the worker says it is ready (so before
	// the start instant is even chosen): a failure only leaves run.json without it.
	if c, err := calibrate.Machine(); err == nil {
		b, _ := json.Marshal(c)
		out.line("calibration " + string(b))
	}
	return runWorker(cfg, cmds, procReport{out})
}

// runWorker is a worker without the process around it (tests run it in-process).
func runWorker(cfg workerConfig, cmds <-chan string, rep interface {
	workerReport
	waitStart(cmds <-chan string) (int64, bool)
}) (workerResult, error) {
	w, err := newWorker(cfg)
	if err != nil {
		return workerResult{}, fmt.Errorf("worker %d: %w", cfg.ID, err)
	}
	if err := w.openLog(); err != nil {
		w.close()
		return workerResult{}, fmt.Errorf("worker %d: %w", cfg.ID, err)
	}
	rep.ready()
	start, ok := rep.waitStart(cmds)
	if !ok {
		// Stopped before the start: nothing is sent, and the log still says so, with a
		// not_sent record for every planned request.
		start = time.Now().UnixNano()
		w.stop("run interrupted before the start")
		w.abort("run aborted")
		ch := make(chan string, 1)
		ch <- "abort"
		cmds = ch
	}
	res, err := w.run(start, cmds, rep)
	if cerr := w.close(); cerr != nil && err == nil && res.Status != rawlog.StatusFailed {
		res.Status, res.Err = rawlog.StatusFailed, fmt.Sprintf("worker %d: log %s: %v", cfg.ID, cfg.Log, cerr)
		rep.failed(res.Err)
	}
	if err != nil {
		return res, fmt.Errorf("worker %d: %w", cfg.ID, err)
	}
	return res, nil
}

// procReport reports over the worker's stdout.
type procReport struct{ out *lineWriter }

func (p procReport) ready() { p.out.line("ready") }

func (p procReport) progress(sent, done, errs int64) error {
	return p.out.line("progress " + strconv.FormatInt(sent, 10) + " " + strconv.FormatInt(done, 10) + " " + strconv.FormatInt(errs, 10))
}

func (p procReport) controlled(seq, ns int64) {
	p.out.line("controlled " + strconv.FormatInt(seq, 10) + " " + strconv.FormatInt(ns, 10))
}

func (p procReport) failed(msg string) { p.out.line("error " + oneLine(msg)) }

func (p procReport) waitStart(cmds <-chan string) (int64, bool) {
	for c := range cmds {
		if rest, ok := strings.CutPrefix(c, "start "); ok {
			ns, err := strconv.ParseInt(rest, 10, 64)
			if err == nil {
				return ns, true
			}
		}
		if c == "stop" || c == "abort" {
			return 0, false
		}
	}
	return 0, false
}

// lineWriter writes whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := io.WriteString(l.w, s+"\n")
	return err
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
