package replay

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/http1"
)

// WorkerLogName returns worker i's log file name in the run directory.
func WorkerLogName(i int) string { return fmt.Sprintf("worker-%03d.rawlog", i) }

// readyTimeout bounds how long workers may take to map the plan and get ready.
const readyTimeout = 2 * time.Minute

// Replay is one run: the coordinator of the worker processes. Create it with New, call Run
// once; Stop and Abort may be called from any goroutine (signal handlers).
type Replay struct {
	opts Options
	plan *mmapds.Plan
	info *planInfo
	cpus []int // one per worker, -1 when unpinned
	// workersNote says why more workers run than CPUs (the open-file limit), for notices and
	// run.json; perCPU is the most workers pinned to one CPU (0 unpinned).
	workersNote string
	perCPU      int
	// sourcesNote says why connections are spread over loopback source addresses the
	// options did not name (connbudget.go), for notices and run.json.
	sourcesNote string
	// partCPUs are this replay's CPUs when it has a part of a shared machine (LocalPart).
	partCPUs []int
	planned  []int // records per worker
	dir      string

	stopReq  chan struct{}
	abortReq chan struct{}
	stopOnce sync.Once
	abrtOnce sync.Once

	// lateGap is how late after StartAt the run may still start (the plan's first gap).
	lateGap time.Duration

	manifest rawlog.Manifest
	mu       sync.Mutex // guards manifest writes
	noticeMu sync.Mutex // notices come from every worker's reader goroutine

	sm serverMetricsState // server_metrics.jsonl and DCGM scrapes (servermetrics.go)
	tr traceState         // the trace key and the OTLP trace receiver (traces.go)

	// preflight is what the preflight found (nil when none ran); serverCloses the URLs whose
	// server it saw close every connection after its response (replay/probe).
	preflight    *rawlog.Preflight
	serverCloses []int
}

// New checks the options, opens and verifies the plan (hash and every record), checks that
// the URLs can be used and that the output directory can take a new run, and decides the
// workers. Nothing is started and nothing is written until Run: an error from New is bad
// input or setup, with nothing left behind.
func New(opts Options) (*Replay, error) {
	if err := opts.normalize(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if _, err := http1.MergeHeaders(nil, opts.Headers, opts.APIKey); err != nil {
		return nil, fmt.Errorf("replay: header: %w", err)
	}
	if opts.TLSCAFile != "" {
		if _, err := http1.LoadTLSConfig(opts.TLSCAFile, false); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	p, err := mmapds.Open(opts.Plan, mmapds.Options{})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	// Workers index their state by Record.Index: a plan whose indexes are not its record
	// numbers would crash them or count a request twice.
	if err := p.Validate(); err != nil {
		p.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &Replay{opts: opts, plan: p, stopReq: make(chan struct{}), abortReq: make(chan struct{})}
	if err := r.setup(); err != nil {
		p.Close()
		return nil, fmt.Errorf("replay: %w", err)
	}
	return r, nil
}

func (r *Replay) setup() error {
	o := &r.opts
	m := r.plan.Meta()
	if len(m.Paths) == 0 {
		return fmt.Errorf("plan %s: no request paths", o.Plan)
	}
	if _, err := http1.MergeHeaders(m.Headers, o.Headers, o.APIKey); err != nil {
		return fmt.Errorf("plan %s: %w", o.Plan, err)
	}
	// What each worker checks of its URLs (scheme, host, no credentials), checked here
	// first so that bad input fails before anything is created.
	method := m.Method
	if method == "" {
		method = "POST"
	}
	tcfg, err := http1.LoadTLSConfig(o.TLSCAFile, o.TLSInsecureSkipVerify)
	if err != nil {
		return err
	}
	hostports := make([]string, len(o.URLs))
	for i, u := range o.URLs {
		t, err := http1.NewTarget(u, &http1.HeadConfig{Method: method, Paths: m.Paths}, tcfg)
		if err != nil {
			return err
		}
		hostports[i] = t.Addr
	}
	if err := checkOutputDir(o.OutputDir); err != nil { // locked in Run (rundirlock.go)
		return err
	}
	if o.WaitForModel > 0 {
		if _, err := r.probes(); err != nil {
			return err
		}
	}
	info, err := scanPlan(r.plan)
	if err != nil {
		return err
	}
	share, err := r.setupShard(info)
	if err != nil {
		return err
	}
	r.info = info
	if o.Control != nil {
		if err := r.checkControl(o.Control); err != nil {
			return fmt.Errorf("control: %w", err)
		}
	}
	if err := r.setupWorkers(share); err != nil {
		return err
	}
	if err := r.setupSources(share.Concurrency, hostports); err != nil { // connbudget.go
		return err
	}
	if len(o.WorkerCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable to start workers: %w", err)
		}
		o.WorkerCommand = []string{exe, WorkerArg}
	}
	return nil
}

// CheckOptions checks what New checks of opts without a plan, a server or an output
// directory (the options, headers, TLS files, URLs, CPUs and workers), so a caller that
// makes the plan first (profile) can refuse bad flags before anything is compiled or sent.
func CheckOptions(opts Options) error {
	opts.URLs = append([]string(nil), opts.URLs...) // normalize rewrites them
	if opts.Plan == "" {
		opts.Plan = "plan" // not opened here
	}
	if opts.OutputDir == "" {
		opts.OutputDir = "run"
	}
	if err := opts.normalize(); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if _, err := http1.MergeHeaders(nil, opts.Headers, opts.APIKey); err != nil {
		return fmt.Errorf("replay: header: %w", err)
	}
	tcfg, err := http1.LoadTLSConfig(opts.TLSCAFile, opts.TLSInsecureSkipVerify)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	for _, u := range opts.URLs {
		if _, err := http1.NewTarget(u, &http1.HeadConfig{Method: "POST", Paths: []string{"/"}}, tcfg); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	if _, _, _, err := opts.workerCPUs(); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// notice writes one line on the notice writer, every URL in it redacted (redact.Text: the
// scraper's and the HTTP client's errors hold whole URLs).
func (r *Replay) notice(s string) {
	if r.opts.Notice != nil {
		r.noticeMu.Lock()
		defer r.noticeMu.Unlock()
		fmt.Fprintln(r.opts.Notice, redactText(s))
	}
}

// Stop asks for a graceful interruption: nothing new is sent, in-flight requests get the
// grace period, then the run ends marked interrupted.
func (r *Replay) Stop() { r.stopOnce.Do(func() { close(r.stopReq) }) }

// Abort ends the run at once: in-flight requests are cut and logged as aborted, logs flushed.
func (r *Replay) Abort() {
	r.Stop()
	r.abrtOnce.Do(func() { close(r.abortReq) })
}

// proc is one worker process as the coordinator sees it.
type proc struct {
	id      int
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	mu      sync.Mutex
	ready   bool
	calib   *rawlog.Calibration // the worker's self-calibration (its "calibration" line)
	doneMsg string
	errMsg  string
	sent    atomic.Int64
	done    atomic.Int64
	errs    atomic.Int64
	exited  chan struct{}
	acks    chan controlAck // its "controlled" lines (control.go)
	waitErr error
	maxRSS  int64 // peak resident set (its "memory" line)
}

func (p *proc) send(s string) {
	io.WriteString(p.stdin, s+"\n")
}

// Run starts the workers, replays the plan and returns the final manifest (also written to
// run.json). The error is non-nil when the run failed; an interrupted run returns its
// manifest and a nil error. A nil manifest means nothing was run and nothing was written
// (the model never answered the readiness probe, or the output directory could not be
// locked: it holds a run, or another run took it first).
func (r *Replay) Run() (*rawlog.Manifest, error) {
	defer r.plan.Close()
	o := &r.opts
	// The receiver's ports are bound before anything is sent: one that cannot be is bad
	// input, and nothing was run.
	if err := r.startTraceReceiver(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer r.finishTraces() // on the returns before finish
	if err := r.waitForModel(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if o.Preflight {
		pf, closes, err := r.runPreflight()
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		r.preflight, r.serverCloses = pf, closes
	}
	// The lock is the run's first write into the directory (rundirlock.go): a run that loses
	// it writes nothing.
	if err := r.lockRunDir(); err != nil {
		return nil, err
	}
	if o.DirLocked != nil {
		if err := o.DirLocked(r.dir); err != nil {
			r.notice("replay: " + err.Error())
		}
	}
	m := &r.manifest
	// Room for the final run.json, released just before it is written, so that a disk the
	// run fills still gets the run's outcome.
	r.reserveSpace()
	defer os.Remove(filepath.Join(r.dir, reserveName))
	// Keep the coordinator (progress, telemetry) off the workers' CPUs when others exist,
	// and give the process its CPUs back afterwards (it may run again, as in tests).
	if !o.NoPin {
		if all, err := allowedCPUs(); err == nil {
			defer setAffinity(all)
			// With a part of a shared machine (LocalPart), the other parts' CPUs are another
			// replay's: stay within this part, beside its own workers if need be.
			home := all
			if r.partCPUs != nil {
				home = r.partCPUs
			}
			var rest []int
			for _, c := range home {
				if !containsInt(r.cpus, c) {
					rest = append(rest, c)
				}
			}
			if len(rest) == 0 && r.partCPUs != nil {
				rest = home
			}
			if len(rest) > 0 {
				setAffinity(rest)
			}
		}
	}
	procs := make([]*proc, len(r.cpus))
	headers, err := http1.MergeHeaders(r.plan.Meta().Headers, o.Headers, o.APIKey)
	if err != nil {
		return r.finish(procs, false, err)
	}
	readyCh := make(chan int, len(procs))
	exitCh := make(chan int, len(procs))
	for i := range procs {
		cfg := workerConfig{ID: i, Workers: len(procs), CPU: r.cpus[i], Plan: r.absPlan(), PlanHash: r.plan.HashHex(),
			URLs: o.URLs, Headers: headers, RequestTimeoutNs: int64(o.RequestTimeout), GraceNs: int64(o.GracePeriod),
			ConnReuse: o.ConnectionReuse, SessionHeader: o.SessionHeader, UserAgent: "llmbench-replay/" + o.ToolVersion,
			TLSCAFile: o.TLSCAFile, TLSInsecure: o.TLSInsecureSkipVerify,
			Log: filepath.Join(r.dir, WorkerLogName(i)), SpinNs: int64(o.Spin), SpareConns: o.SpareConns, Client: o.Client,
			MaxResponseBytes: o.MaxResponseBytes, ShardIndex: o.ShardIndex, ShardCount: o.ShardCount, LocalAddrs: o.LocalAddrs,
			ServerCloses: r.serverCloses, Control: o.Control, Traceparent: o.sendsTraceparent(), RunID: o.RunID}
		p, err := r.startWorker(cfg, readyCh, exitCh)
		if err != nil {
			for _, q := range procs[:i] {
				q.stdin.Close()
				<-q.exited
			}
			return r.finish(procs, false, err)
		}
		procs[i] = p
		m.Workers[i].PID = p.cmd.Process.Pid
	}
	// Wait for every worker to be ready (plan mapped, CPU pinned, log open).
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	for n := 0; n < len(procs); {
		select {
		case <-readyCh:
			n++
		case <-deadline.C:
			return r.failProcs(procs, fmt.Errorf("workers not ready after %v", readyTimeout))
		case <-r.stopReq:
			return r.stoppedBeforeStart(procs)
		case <-exitCh:
			return r.failProcs(procs, errors.New("a worker exited before the start"))
		}
	}
	for i, p := range procs {
		p.mu.Lock()
		m.Workers[i].Calibration = p.calib // sent before ready
		p.mu.Unlock()
	}
	start, err := r.startSource().StartInstant(time.Now(), r.stopReq)
	if errors.Is(err, ErrStartStopped) {
		return r.stoppedBeforeStart(procs)
	}
	if err != nil {
		return r.failProcs(procs, err)
	}
	startNs := start.UnixNano()
	for _, p := range procs {
		p.send("start " + strconv.FormatInt(startNs, 10))
	}
	m.StartUnixNs = startNs
	m.StartTime = start.UTC().Format(time.RFC3339Nano)
	r.startTraces(startNs)
	if err := r.writeManifest(); err != nil {
		r.abortProcs(procs)
		return r.finish(procs, false, err)
	}
	r.awaitStart(start)

	// GPU telemetry, in this process, off the workers' CPUs.
	telStop := make(chan struct{})
	telDone := make(chan error, 1)
	r.startServerMetrics(start, telStop)
	r.startTelemetry(start, telStop, telDone)

	progStop := make(chan struct{})
	progDone := make(chan struct{})
	go r.progressLoop(procs, start, progStop, progDone)
	obsDone := make(chan struct{})
	go r.observeLoop(procs, start, startNs, progStop, obsDone)

	allExited := make(chan struct{})
	go func() {
		for _, p := range procs {
			<-p.exited
		}
		close(allExited)
	}()
	interrupted := false
	stopReq, abortReq := r.stopReq, r.abortReq
	var killC <-chan time.Time
	for done := false; !done; {
		select {
		case <-allExited:
			done = true
		case <-stopReq:
			stopReq = nil
			interrupted = true
			for _, p := range procs {
				p.send("stop")
			}
		case <-abortReq:
			abortReq = nil
			interrupted = true
			for _, p := range procs {
				p.send("abort")
			}
			// An aborted worker flushes and exits in milliseconds; one that does not is
			// stuck, and the run must still end.
			killC = time.After(abortKillDelay)
		case <-killC:
			for _, p := range procs {
				select {
				case <-p.exited:
				default:
					p.cmd.Process.Kill()
				}
			}
		}
	}
	close(progStop)
	<-progDone
	<-obsDone // the observer has seen every worker's log to its end
	close(telStop)
	telErr := <-telDone
	if telErr != nil {
		r.notice("replay: GPU telemetry: " + telErr.Error())
	}
	r.waitServerMetrics()
	return r.finish(procs, interrupted, nil)
}

// stoppedBeforeStart ends a run interrupted before anything was sent: the workers log every
// request as not sent and the run ends interrupted, like any other interruption.
func (r *Replay) stoppedBeforeStart(procs []*proc) (*rawlog.Manifest, error) {
	for _, p := range procs {
		p.send("abort")
	}
	for _, p := range procs {
		<-p.exited
	}
	return r.finish(procs, true, nil)
}

// abortKillDelay is how long aborted workers get to exit before they are killed.
const abortKillDelay = 10 * time.Second

// finish collects the workers' outcomes and writes the final run.json. runErr is why the
// run failed before the start (procs then has nil entries for workers never started); every
// planned request still ends in exactly one count.
func (r *Replay) finish(procs []*proc, interrupted bool, runErr error) (*rawlog.Manifest, error) {
	m := &r.manifest
	m.EndUnixNs = time.Now().UnixNano()
	var failures []string
	m.Counts = rawlog.Counts{}
	for i, p := range procs {
		wi := &m.Workers[i]
		st, counts, why := r.workerOutcome(p, wi, runErr)
		wi.Status = st
		if p != nil {
			p.mu.Lock()
			wi.MaxRSSBytes = p.maxRSS
			p.mu.Unlock()
		}
		m.Counts.Add(counts)
		if why != "" {
			failures = append(failures, why)
		}
	}
	switch {
	case runErr != nil:
		// The workers' own complaints are in their statuses; the cause is runErr.
		m.Status = rawlog.StatusFailed
		failures = []string{runErr.Error()}
	case interrupted:
		m.Status = rawlog.StatusInterrupted
	case len(failures) > 0:
		m.Status = rawlog.StatusFailed
	default:
		m.Status = rawlog.StatusComplete
	}
	if len(failures) > 0 {
		m.Error = redactText(strings.Join(failures, "; "))
	}
	r.finishTraces()
	os.Remove(filepath.Join(r.dir, reserveName))
	if err := r.writeManifest(); err != nil {
		return m, fmt.Errorf("%w (the counts of this run are only in this message and on stderr)", err)
	}
	if m.Status == rawlog.StatusFailed {
		return m, fmt.Errorf("replay: %s", m.Error)
	}
	return m, nil
}

// workerOutcome reads how a worker ended: from its done line, or, when it died (or never
// started: p is nil), from what its log holds. Requests it started and never logged are
// lost; those it never started are written as not_sent to its recovery log.
func (r *Replay) workerOutcome(p *proc, wi *rawlog.WorkerInfo, runErr error) (status string, c rawlog.Counts, why string) {
	var doneMsg, errMsg string
	var waitErr error
	if p != nil {
		p.mu.Lock()
		doneMsg, errMsg = p.doneMsg, p.errMsg
		p.mu.Unlock()
		waitErr = p.waitErr
	}
	f := strings.Fields(doneMsg)
	if len(f) == 9 && waitErr == nil {
		nums := make([]int, 7)
		ok := true
		for i := range nums {
			n, err := strconv.Atoi(f[2+i])
			if err != nil {
				ok = false
			}
			nums[i] = n
		}
		if ok {
			c = rawlog.Counts{Planned: nums[0], Completed: nums[1], Failed: nums[2], Cancelled: nums[3], Aborted: nums[4], NotSent: nums[5], ClientFailed: nums[6]}
			if c.Planned != wi.Planned || c.Accounted() != c.Planned {
				return rawlog.StatusFailed, c, fmt.Sprintf("worker %d reported %d outcomes of %d planned requests, its part has %d", p.id, c.Accounted(), c.Planned, wi.Planned)
			}
			if f[1] == rawlog.StatusFailed {
				// The worker ended the run itself (its log failed, the plan changed) and
				// said why on its "error" line; its counts are still exact.
				if errMsg == "" {
					errMsg = fmt.Sprintf("worker %d failed", p.id)
				}
				return f[1], c, errMsg
			}
			return f[1], c, ""
		}
	}
	status = rawlog.StatusFailed
	how := "ended without reporting its outcome"
	var ee *exec.ExitError
	switch {
	case p == nil:
		how = "was never started"
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status, how = rawlog.StatusKilled, "killed by signal "+ws.Signal().String()
		} else {
			how = fmt.Sprintf("exited with status %d", ee.ExitCode())
		}
	}
	notSentWhy := fmt.Sprintf("worker %d died (%s) before sending it", wi.ID, how)
	if runErr != nil {
		notSentWhy = "the run failed before the start"
	}
	rec := r.recoverPart(wi.ID, wi.Log)
	c = rec.counts
	logNote := ""
	if rec.torn > 0 {
		logNote = fmt.Sprintf(", torn final frame of %d bytes skipped", rec.torn)
	}
	if rec.unreadable != nil {
		logNote += fmt.Sprintf("; log unreadable past a damaged record, requests without a readable record counted lost: %v", rec.unreadable)
	}
	if len(rec.notSent) > 0 {
		if err := r.writeRecoveryLog(wi.ID, rec.notSent, notSentWhy); err != nil {
			// They were still never sent (no Sent record), which is how readers of the
			// worker's log tell them from the lost ones.
			logNote += fmt.Sprintf("; could not write the recovery log, so its %d never-sent requests are in no log: %v", len(rec.notSent), err)
		} else {
			wi.RecoveryLog, wi.Recovered = RecoveryLogName(wi.ID), len(rec.notSent)
		}
	}
	wi.Lost = c.Lost
	why = fmt.Sprintf("worker %d (pid %d, CPU %d) %s: %d of its %d planned requests lost in flight, %d never sent", wi.ID, wi.PID, wi.CPU, how, c.Lost, wi.Planned, len(rec.notSent))
	if wi.RecoveryLog != "" {
		why += " (not_sent in " + wi.RecoveryLog + ")"
	}
	why += logNote
	if errMsg != "" {
		why += ": " + errMsg
	}
	return status, c, why
}

// startWorker starts worker cfg.ID and the goroutine that reads its reports.
func (r *Replay) startWorker(cfg workerConfig, readyCh, exitCh chan<- int) (*proc, error) {
	o := &r.opts
	cmd := exec.Command(o.WorkerCommand[0], o.WorkerCommand[1:]...)
	cmd.Stderr = o.WorkerStderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	// Own process group: a terminal's Ctrl-C reaches only the coordinator, which then stops
	// the workers in order instead of having them die mid-write.
	cmd.SysProcAttr = workerSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %d (%s): %w", cfg.ID, o.WorkerCommand[0], err)
	}
	p := &proc{id: cfg.ID, cmd: cmd, stdin: stdin, exited: make(chan struct{}), acks: make(chan controlAck, 16)}
	b, _ := json.Marshal(cfg)
	p.send(string(b))
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			kind, rest, _ := strings.Cut(line, " ")
			switch kind {
			case "calibration":
				var c rawlog.Calibration
				if json.Unmarshal([]byte(rest), &c) == nil {
					p.mu.Lock()
					p.calib = &c
					p.mu.Unlock()
				}
			case "memory":
				if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
					p.mu.Lock()
					p.maxRSS = n
					p.mu.Unlock()
				}
			case "ready":
				p.mu.Lock()
				p.ready = true
				p.mu.Unlock()
				readyCh <- p.id
			case "progress":
				f := strings.Fields(rest)
				if len(f) == 3 {
					a, _ := strconv.ParseInt(f[0], 10, 64)
					b, _ := strconv.ParseInt(f[1], 10, 64)
					c, _ := strconv.ParseInt(f[2], 10, 64)
					p.sent.Store(a)
					p.done.Store(b)
					p.errs.Store(c)
				}
			case "controlled":
				if a, ok := parseControlled(rest); ok {
					select {
					case p.acks <- a:
					default: // nobody waits for it any more
					}
				}
			case "done":
				p.mu.Lock()
				p.doneMsg = line
				p.mu.Unlock()
			case "error":
				p.mu.Lock()
				p.errMsg = rest
				p.mu.Unlock()
				r.notice("replay: " + rest)
			}
		}
		p.waitErr = cmd.Wait()
		stdin.Close()
		close(p.exited)
		exitCh <- p.id
	}()
	return p, nil
}

func (r *Replay) abortProcs(procs []*proc) {
	for _, p := range procs {
		p.send("abort")
		p.stdin.Close()
	}
	for _, p := range procs {
		<-p.exited
	}
}

// failProcs aborts the workers and ends the run as failed before it started.
func (r *Replay) failProcs(procs []*proc, err error) (*rawlog.Manifest, error) {
	r.abortProcs(procs)
	var msgs []string
	for _, p := range procs {
		p.mu.Lock()
		if p.errMsg != "" {
			msgs = append(msgs, p.errMsg)
		}
		p.mu.Unlock()
	}
	if len(msgs) > 0 {
		err = fmt.Errorf("%w: %s", err, strings.Join(msgs, "; "))
	}
	return r.finish(procs, false, err)
}

func (r *Replay) absPlan() string {
	if a, err := filepath.Abs(r.opts.Plan); err == nil {
		return a
	}
	return r.opts.Plan
}

// reserveName is a file of reserveSize bytes that Run keeps in the run directory during the
// run and removes just before it writes the final run.json.
const (
	reserveName = ".run.json.reserve"
	reserveSize = 256 << 10
)

// reserveSpace writes the reserve file; without it (no room even for that) the run goes on.
func (r *Replay) reserveSpace() {
	path := filepath.Join(r.dir, reserveName)
	if err := os.WriteFile(path, make([]byte, reserveSize), 0o644); err != nil {
		os.Remove(path)
	}
}
