package replay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/eventloop"
	"github.com/llmbench/llmbench/replay/http1"
	"github.com/llmbench/llmbench/replay/schedule"
)

// workerConfig is everything a worker process needs; the coordinator sends it as one JSON
// line on the worker's stdin (never on the command line or in the environment, since it
// carries credentials).
type workerConfig struct {
	ID      int    `json:"id"`
	Workers int    `json:"workers"`
	CPU     int    `json:"cpu"` // -1: do not pin
	Plan    string `json:"plan"`
	// PlanHash is the hash the coordinator verified; the worker maps the plan without
	// rehashing and only compares the stored hash.
	PlanHash         string      `json:"plan_hash"`
	URLs             []string    `json:"urls"`
	Headers          [][2]string `json:"headers"`
	RequestTimeoutNs int64       `json:"request_timeout_ns"`
	GraceNs          int64       `json:"grace_ns"` // < 0: infinite
	ConnReuse        string      `json:"conn_reuse"`
	SessionHeader    string      `json:"session_header"`
	UserAgent        string      `json:"user_agent"`
	TLSCAFile        string      `json:"tls_ca_file,omitempty"`
	TLSInsecure      bool        `json:"tls_insecure,omitempty"`
	Log              string      `json:"log"`
	// SpinNs makes open-loop sends wake this long before their instant and spin the rest.
	SpinNs int64 `json:"spin_ns"`
	// SpareConns is Options.SpareConns.
	SpareConns int `json:"spare_conns"`
	// Client is the HTTP client (ClientLoop, ClientNet; "" is DefaultClient).
	Client string `json:"client,omitempty"`
	// MaxResponseBytes bounds what one request stores (Options.MaxResponseBytes).
	MaxResponseBytes int64 `json:"max_response_bytes"`
	// ShardIndex and ShardCount select the distributed shard (distshard.go); count 0: all.
	ShardIndex int `json:"shard_index,omitempty"`
	ShardCount int `json:"shard_count,omitempty"`
	// LocalAddrs are the source addresses to spread connections over (localaddr.go).
	LocalAddrs []netip.Addr `json:"local_addrs,omitempty"`
	// ServerCloses lists the URLs (indexes in URLs) whose server closes every connection
	// after one response, as the preflight found (http1.ConnPolicy).
	ServerCloses []int `json:"server_closes,omitempty"`
	// Traceparent makes every request carry a W3C traceparent under the run's trace key,
	// tracectx.NewKey(plan hash, start instant, RunID), as the coordinator derives it.
	Traceparent bool   `json:"traceparent,omitempty"`
	RunID       string `json:"run_id,omitempty"`
	// Control is the release gate's first setting (control.go); nil: no gate.
	Control *Control `json:"control,omitempty"`

	// load builds the worker's part of the plan; nil means schedule.LoadGraph for a plan
	// with a graph section, else schedule.LoadChains. Tests put a graph with branches and
	// joins here.
	load func(p *mmapds.Plan, ord []uint32, workers, worker int) (*schedule.Graph, error)
	// openLog opens the log file; nil means os.OpenFile. Tests put a failing file here.
	openLog func(path string) (logFile, error)
	// logWriteThrough (tests) writes each log frame before the next is queued (logSink).
	logWriteThrough bool
}

// logFile is what a worker writes its log to.
type logFile interface {
	io.Writer
	Sync() error
	Close() error
}

// workerReport is what a worker tells the coordinator as it runs. An error from progress
// means the coordinator can no longer hear the worker.
type workerReport interface {
	ready()
	progress(sent, done, errs int64) error
	// failed says, once, why the run failed (StatusFailed), as it happens.
	failed(msg string)
}

// workerResult is how a worker ended.
type workerResult struct {
	Status string // complete, interrupted or failed
	Counts rawlog.Counts
	// Err says why the run failed (Status failed).
	Err string
}

// worker replays its part of the plan (of its shard, when the run is distributed).
type worker struct {
	cfg  workerConfig
	plan *mmapds.Plan
	meta *mmapds.Meta
	g    *schedule.Graph
	// drv is what the transport gets of the worker: the plan, the scheduler, the targets,
	// the settings, the clock, the Stop and the log (log.go's workerLog).
	drv   *driver.Worker
	conns http1.ConnPolicy // what each URL's server does with connections
	// secrets are the credentials the headers carry (redact.HeaderSecrets), masked in every
	// body and error before it is logged: a server that echoes one leaves it in no file.
	secrets     [][]byte
	secretTexts []string // secrets as strings, to look for in errors

	info *planInfo
	rep  workerReport

	lw   *rawlog.Writer
	sink *logSink
	file logFile

	// failure is the first error that failed the run (the log cannot be written, the plan
	// changed, the coordinator is gone); later ones are consequences and are not reported.
	failure atomic.Pointer[error]

	// sched decides what may be sent when; the transport drives it (the event loop on its
	// thread, the net client's dispatcher under its lock).
	sched *schedule.Scheduler
	// gate is the in-run control of release (nil: none), set from the command reader.
	gate *schedule.Gate

	logged []atomic.Uint64 // bit per plan index: a record was written

	done, errs   atomic.Int64
	counts       [6]atomic.Int64 // by countedOutcome
	clientFailed atomic.Int64    // of the failed, the client's own (ClientErrorPrefix)

	// tr is the HTTP client that sends (clientchoice.go); loop says it is the event loop.
	tr   driver.Transport
	loop bool
}

// newWorker opens the plan and prepares everything that does not need the start instant.
func newWorker(cfg workerConfig) (*worker, error) {
	if cfg.Workers < 1 || cfg.ID < 0 || cfg.ID >= cfg.Workers {
		return nil, fmt.Errorf("worker %d of %d: bad worker number", cfg.ID, cfg.Workers)
	}
	p, err := mmapds.Open(cfg.Plan, mmapds.Options{SkipHash: true})
	if err != nil {
		return nil, err
	}
	w := &worker{cfg: cfg, plan: p, meta: p.Meta()}
	w.drv = &driver.Worker{ID: cfg.ID, PlanPath: cfg.Plan, Plan: p, Conns: &w.conns, Reuse: cfg.ConnReuse,
		Timeout: time.Duration(cfg.RequestTimeoutNs), SpinNs: cfg.SpinNs, SpareConns: cfg.SpareConns, MaxResponseBytes: cfg.MaxResponseBytes,
		SessionHeader: cfg.SessionHeader, Log: (*workerLog)(w)}
	w.secretTexts = redact.HeaderSecrets(cfg.Headers)
	for _, s := range w.secretTexts {
		w.secrets = append(w.secrets, []byte(s))
	}
	fail := func(err error) (*worker, error) {
		p.Close()
		return nil, err
	}
	if cfg.PlanHash != "" && p.HashHex() != cfg.PlanHash {
		got, want := rawlog.HashPrefixes(p.HashHex(), cfg.PlanHash)
		return fail(fmt.Errorf("plan %s changed since the coordinator opened it (hash %s, want %s)", cfg.Plan, got, want))
	}
	// The coordinator validated the plan; a worker run without one (tests) relies on it too:
	// per-request state is indexed by Record.Index.
	if err := p.Validate(); err != nil {
		return fail(err)
	}
	if w.drv.Timeout <= 0 {
		w.drv.Timeout = http1.DefaultRequestTimeout
	}
	switch w.drv.Reuse {
	case ReusePooled, ReuseNever, ReuseSticky:
	case "":
		w.drv.Reuse = ReusePooled
	default:
		return fail(fmt.Errorf("unknown connection reuse strategy %q", w.drv.Reuse))
	}
	info, err := scanPlan(p)
	if err != nil {
		return fail(err)
	}
	sc := schedule.Config{DurationNs: w.meta.DurationNs, ProfileStartNs: info.profileStart, ProfileOpen: info.profileOpen, GraceNs: cfg.GraceNs}
	share, err := info.allot(w.meta, schedule.Part{Shard: cfg.ShardIndex, Shards: cfg.ShardCount, Worker: cfg.ID, Workers: cfg.Workers}, &sc)
	if err != nil {
		return fail(err)
	}
	w.info = info
	if cfg.Control != nil {
		w.gate = schedule.NewGate(schedule.Part{Shard: cfg.ShardIndex, Shards: cfg.ShardCount, Worker: cfg.ID, Workers: cfg.Workers}, w.meta.Seed)
		if users, rate := w.meta.UserGrid(); users > 0 {
			w.gate.SetUserGrid(users, rate, info.profileStart)
		}
		if err := w.gate.Set(cfg.Control.Variable, cfg.Control.Value); err != nil {
			return fail(err)
		}
		sc.Gate = w.gate
	}
	if len(cfg.URLs) == 0 {
		return fail(errors.New("no URL"))
	}
	load := cfg.load
	switch {
	case load != nil:
	case p.HasGraph():
		load = schedule.LoadGraph // agentic plans: the graph section says who waits for whom
	default:
		load = schedule.LoadChains
	}
	if w.g, err = load(p, info.ord, cfg.Workers, cfg.ID); err != nil {
		return fail(err)
	}
	w.drv.Graph = w.g
	tcfg, err := http1.LoadTLSConfig(cfg.TLSCAFile, cfg.TLSInsecure)
	if err != nil {
		return fail(err)
	}
	method := w.meta.Method
	if method == "" {
		method = "POST"
	}
	hc := &http1.HeadConfig{Method: method, Paths: w.meta.Paths, Headers: cfg.Headers,
		CloseConn: w.drv.Reuse == ReuseNever, UserAgent: cfg.UserAgent}
	for _, u := range cfg.URLs {
		t, err := http1.NewTarget(u, hc, tcfg)
		if err != nil {
			return fail(err)
		}
		w.drv.Targets = append(w.drv.Targets, t)
	}
	w.conns.Init(len(w.drv.Targets), cfg.ServerCloses)
	if share.Concurrency == 0 && w.g.HasClosedLoop() {
		return fail(fmt.Errorf("plan %s has closed-loop records (no send offset) but concurrency 0", cfg.Plan))
	}
	if share.Prefill {
		if w.drv.FirstToken, err = endpoint.Lookup(w.meta.Endpoint); err != nil {
			return fail(fmt.Errorf("plan %s: prefill concurrency: %w", cfg.Plan, err))
		}
		if f := w.meta.ResponseField(); f != "" {
			w.drv.FirstToken.ResponseField = f
		}
	}
	w.sched, err = schedule.New(w.g, sc)
	if err != nil {
		return fail(fmt.Errorf("plan %s: %w", cfg.Plan, err))
	}
	w.drv.Sched = w.sched
	w.logged = make([]atomic.Uint64, (p.Len()+63)/64)
	w.drv.Source = driver.NewLocalAddrPicker(cfg.LocalAddrs, cfg.ID)
	w.drv.Dialer = w.drv.Source.Dialer(net.Dialer{KeepAlive: 30 * time.Second})
	if err := w.drv.Live.Init(w.meta); err != nil {
		return fail(err)
	}
	if p.HasGraph() {
		w.drv.Live.FollowGraph(p) // live markers follow each record's reply sources
	}
	if w.tr, w.loop, err = newTransport(w.drv, cfg.Client); err != nil {
		return fail(err)
	}
	return w, nil
}

// planInfo is what a pass over the whole plan tells every worker alike.
type planInfo struct {
	ord []uint32
	// offsets are the records' send offsets (-1: none), for the not_sent records written
	// at the end of a run without reading the mapping again: the plan may be gone by then.
	offsets      []int64
	sessions     int
	profileStart int64 // smallest profile send offset, 0 when none is planned
	profileOpen  bool  // some profile record has a send offset
}

func scanPlan(p *mmapds.Plan) (*planInfo, error) {
	ord, n, err := sessionOrdinals(p)
	if err != nil {
		return nil, err
	}
	info := &planInfo{ord: ord, offsets: make([]int64, p.Len()), sessions: n, profileStart: -1}
	for i := 0; i < p.Len(); i++ {
		r, _, _ := p.Record(i)
		info.offsets[i] = max(r.SendOffsetNs, -1)
		if r.Phase == mmapds.PhaseProfile && r.SendOffsetNs >= 0 && (info.profileStart < 0 || r.SendOffsetNs < info.profileStart) {
			info.profileStart = r.SendOffsetNs
		}
	}
	info.profileOpen = info.profileStart >= 0
	if info.profileStart < 0 {
		info.profileStart = 0
	}
	return info, nil
}

func (w *worker) nowNs() int64 { return w.drv.Now() }

// openLog creates the log file and its sink; the header is written once start is known.
func (w *worker) openLog() error {
	open := w.cfg.openLog
	if open == nil {
		open = func(path string) (logFile, error) {
			return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		}
	}
	f, err := open(w.cfg.Log)
	if err != nil {
		return err
	}
	w.file = f
	w.sink = newLogSink(f)
	if w.loop {
		w.sink.ownerFlush = true // the event loop wakes the writer once per wake-up
		w.sink.rawWrite = eventloop.RawFileWriter(f)
	}
	w.sink.writeThrough = w.cfg.logWriteThrough
	return nil
}

// run replays the worker's part from startUnixNs until done, stopped or aborted; cmds delivers
// "stop" and "abort". A closed cmds, or a failed progress report, means the coordinator is
// gone: the worker then stops as if interrupted (grace period, then abort) and its run fails.
// The result's counts are exact even when the log could not be written; the error is only
// for a log that could not be started.
func (w *worker) run(startUnixNs int64, cmds <-chan string, rep workerReport) (workerResult, error) {
	w.rep = rep
	// Anchor the run's clock: the start instant is a wall-clock time shared by all workers;
	// from here on every timestamp is monotonic time since that instant.
	now := time.Now()
	w.drv.Start = now.Add(time.Duration(startUnixNs - now.UnixNano()))
	if w.cfg.Traceparent {
		w.drv.Trace = tracectx.NewKey(w.plan.HashHex(), startUnixNs, w.cfg.RunID)
	}
	lw, err := rawlog.NewWriter(w.sink, rawlog.Header{Worker: w.cfg.ID, PID: os.Getpid(), CPU: w.cfg.CPU,
		PlanHash: w.plan.HashHex(), StartUnixNs: startUnixNs,
		PlanPath: w.cfg.Plan, Planned: w.g.Len(), Workers: w.cfg.Workers})
	if err != nil && (lw == nil || !w.sink.failed()) {
		return workerResult{}, err
	}
	w.lw = lw
	if err != nil {
		// The file failed under the header (the writer goroutine wrote its first bytes
		// before the rest was queued): the run fails as on any failed log write, nothing
		// is sent, and the counts stay exact.
		w.fail(err)
	}
	w.sampleCPU()
	cpuStop := make(chan struct{})
	cpuDone := make(chan struct{})
	go w.cpuLoop(cpuStop, cpuDone)

	allDone := make(chan struct{})
	go func() {
		w.tr.Run()
		close(allDone)
	}()

	interrupted, orphaned := false, false
	var graceC <-chan time.Time
	// interrupt stops sending and gives in-flight requests the grace period (once).
	interrupt := func(why string) {
		if !interrupted {
			interrupted = true
			w.stop(why)
			if w.cfg.GraceNs >= 0 {
				graceC = time.After(time.Duration(w.cfg.GraceNs))
			}
		}
	}
	// orphan handles the loss of the coordinator: nobody will send stop or abort any more,
	// so the worker ends the run itself, leaving a complete log.
	orphan := func(how string) {
		if orphaned {
			return
		}
		orphaned, cmds = true, nil
		err := fmt.Errorf("coordinator gone (%s)", how)
		fmt.Fprintf(os.Stderr, "replay worker %d: %v: sending nothing new; in-flight requests get the grace period\n", w.cfg.ID, err)
		w.setFailure(err)
		interrupt("coordinator gone before it was sent")
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
loop:
	for {
		select {
		case <-allDone:
			break loop
		case c, ok := <-cmds:
			switch {
			case !ok:
				orphan("its end of the worker's stdin closed")
			case c == "abort":
				cmds = nil
				interrupted = true
				w.stop("run interrupted")
				w.abort("run aborted")
			case c == "stop":
				interrupt("run interrupted")
			case strings.HasPrefix(c, "control "):
				w.control(c, rep)
			}
		case <-graceC:
			w.abort("grace period over after interruption")
		case <-tick.C:
			if !orphaned {
				if err := rep.progress(w.drv.Sent.Load(), w.done.Load(), w.errs.Load()); err != nil {
					orphan("progress report: " + err.Error())
				}
			}
		}
	}
	close(cpuStop)
	<-cpuDone
	// Every planned record of the worker's part gets exactly one record: those never sent now.
	why := "run interrupted"
	if s, ok := w.drv.Stop.NotSentWhy(); ok {
		why = s
	}
	for i := int32(0); i < int32(w.g.Len()); i++ {
		n := w.g.Node(i)
		if w.isLogged(n.Index) {
			continue
		}
		nodeWhy := why
		if b := w.sched.SkippedFor(i); b >= 0 {
			nodeWhy = rawlog.SkippedErr(uint32(b))
		} else if w.sched.ThinnedUnit(n.Unit()) {
			nodeWhy = rawlog.ThinnedErr // planned at the ceiling, held back by the gate
		}
		q := driver.NotSentRecord(uint32(n.Index), w.info.offsets[n.Index], w.drv.URLOfUnit(n.Unit()), nodeWhy)
		w.logRequest(&q)
	}
	w.sampleCPU()
	status := rawlog.StatusComplete
	if interrupted {
		status = rawlog.StatusInterrupted
	}
	if w.failure.Load() != nil {
		status = rawlog.StatusFailed
	}
	if !orphaned {
		rep.progress(w.drv.Sent.Load(), w.done.Load(), w.errs.Load())
	}
	if err := w.lw.Close(rawlog.Footer{TimeNs: w.nowNs(), Status: status}); err != nil {
		w.fail(err)
	}
	// Everything is in the kernel and synced before the outcome is reported.
	if err := w.sink.close(); err != nil {
		w.fail(err) // the error names the file
	}
	w.sink = nil // closed: close has nothing left to flush
	res := workerResult{Status: status}
	if p := w.failure.Load(); p != nil {
		res.Status, res.Err = rawlog.StatusFailed, w.failureText(*p)
	}
	res.Counts.Planned = w.g.Len()
	res.Counts.Completed = int(w.counts[rawlog.OutcomeCompleted].Load())
	res.Counts.Failed = int(w.counts[rawlog.OutcomeFailed].Load())
	res.Counts.Cancelled = int(w.counts[rawlog.OutcomeCancelled].Load())
	res.Counts.Aborted = int(w.counts[rawlog.OutcomeAborted].Load())
	res.Counts.NotSent = int(w.counts[rawlog.OutcomeNotSent].Load())
	res.Counts.ClientFailed = int(w.clientFailed.Load())
	return res, nil
}

// controlReport is a report that can say a control change was applied.
type controlReport interface {
	controlled(seq, ns int64)
}

// control applies a "control" command to the gate, wakes the transport so that what the
// change releases goes out now, and says when it was applied.
func (w *worker) control(cmd string, rep workerReport) {
	seq, c, ok := parseControl(cmd)
	if !ok || w.gate == nil {
		fmt.Fprintf(os.Stderr, "replay worker %d: ignored %q (no gate or malformed)\n", w.cfg.ID, cmd)
		return
	}
	if err := w.gate.Set(c.Variable, c.Value); err != nil {
		fmt.Fprintf(os.Stderr, "replay worker %d: %v\n", w.cfg.ID, err)
		return
	}
	ns := w.nowNs()
	w.tr.Wake()
	if cr, ok := rep.(controlReport); ok {
		cr.controlled(seq, ns)
	}
}

// durationElapsed stops sending at the end of a duration-sized plan, when the scheduler
// says it is over (schedule.DurationElapsed); the never-sent records say why.
func (w *worker) durationElapsed() { w.stop("benchmark duration elapsed") }

// durationAbort cuts what still runs a grace period after the duration's end
// (Scheduler.AbortDue).
func (w *worker) durationAbort() { w.abort("benchmark duration and grace period over") }

// close releases the worker's resources; run's log is flushed and synced first.
func (w *worker) close() error {
	var err error
	if w.sink != nil {
		err = w.sink.close()
	}
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
	}
	w.tr.Close()
	w.plan.Close()
	return err
}

func (w *worker) isLogged(idx int32) bool {
	return w.logged[idx/64].Load()&(1<<(uint(idx)%64)) != 0
}

// logRequest writes q and counts it. It is the only way a request record is written. The
// count is kept even when the write fails, so the worker's report stays exact.
func (w *worker) logRequest(q *rawlog.Request) {
	w.logged[q.Index/64].Or(1 << (q.Index % 64))
	w.counts[driver.CountedOutcome(q)].Add(1)
	if driver.CountedOutcome(q) == rawlog.OutcomeFailed && strings.HasPrefix(q.Err, ClientErrorPrefix) {
		w.clientFailed.Add(1)
	}
	if w.sink.failed() {
		return // the first failed write was reported; nothing more reaches the file
	}
	w.mask(q)
	if err := w.lw.WriteRequest(q); err != nil {
		w.fail(err) // the error names the file
	}
}

// mask hides every credential the worker sends (w.secrets) in q's body, in place and at its
// length (the read ends hold), and in its error: a server's echo of one never reaches the log.
// It allocates nothing unless there is one to hide in the error.
func (w *worker) mask(q *rawlog.Request) {
	redact.Mask(q.Body, w.secrets)
	for _, s := range w.secretTexts {
		if strings.Contains(q.Err, s) {
			b := []byte(q.Err)
			redact.Mask(b, w.secrets)
			q.Err = string(b)
			return
		}
	}
}

// logDone counts a request that was sent as done and logs it.
func (w *worker) logDone(q *rawlog.Request) {
	w.done.Add(1)
	if driver.CountedOutcome(q) != rawlog.OutcomeCompleted {
		w.errs.Add(1)
	}
	w.logRequest(q)
}

// logSent writes a Sent record for plan index idx and returns once it is in the kernel, so it
// survives a SIGKILL that comes after the request's first byte was written.
func (w *worker) logSent(idx uint32) error {
	err := w.lw.WriteSent(rawlog.Sent{Index: idx, TimeNs: w.nowNs()})
	if err == nil {
		err = w.sink.flush()
	}
	if err != nil {
		w.fail(err) // the error names the file
	}
	return err
}

// logSentQueued writes a Sent record for plan index idx without flushing it (logSent's first
// half; flushSent is the second, once for several).
func (w *worker) logSentQueued(idx uint32) error {
	err := w.lw.WriteSent(rawlog.Sent{Index: idx, TimeNs: w.nowNs()})
	if err != nil {
		w.fail(err)
	}
	return err
}

// flushSent returns once every Sent record queued so far is in the kernel.
func (w *worker) flushSent() error {
	err := w.sink.flush()
	if err != nil {
		w.fail(err)
	}
	return err
}

// fail ends the run on an unrecoverable error (the log cannot be written, the plan file
// changed): nothing new is sent, in-flight requests are cut, and the run fails. Only the
// first error is reported, once; the rest follow from it.
func (w *worker) fail(err error) {
	if !w.setFailure(err) {
		return
	}
	why := "not sent: the worker failed: " + err.Error()
	w.stop(why)
	w.abort("cut: the worker failed: " + err.Error())
}

// setFailure records err as why the run failed and reports it, unless a failure is already
// recorded; it says whether err was the first.
func (w *worker) setFailure(err error) bool {
	if !w.failure.CompareAndSwap(nil, &err) {
		return false
	}
	if w.rep != nil {
		w.rep.failed(w.failureText(err))
	}
	return true
}

// failureText is how the worker reports the error that failed its run.
func (w *worker) failureText(err error) string { return fmt.Sprintf("worker %d: %v", w.cfg.ID, err) }

// stop ends sending: the transport starts nothing new. why becomes the Err of the records
// that were never sent.
func (w *worker) stop(why string) {
	if w.drv.Stop.Stop(why) {
		w.tr.Wake()
	}
}

// abort cuts every in-flight request now.
func (w *worker) abort(why string) {
	if w.drv.Stop.Abort(why) {
		w.tr.Abort()
	}
}

func (w *worker) sampleCPU() {
	u, s := cpuTime()
	if w.sink.failed() {
		return
	}
	if err := w.lw.WriteCPU(rawlog.CPUSample{TimeNs: w.nowNs(), UserNs: u, SysNs: s}); err != nil {
		w.fail(err) // the error names the file
	}
}

// cpuLoop samples the process's CPU time once a second, so analyze can tell whether the
// client was saturated.
func (w *worker) cpuLoop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.sampleCPU()
		}
	}
}

// workerLog is the worker as its transport's log (driver.Log).
type workerLog worker

func (l *workerLog) Sent(idx uint32) error       { return (*worker)(l).logSent(idx) }
func (l *workerLog) SentQueued(idx uint32) error { return (*worker)(l).logSentQueued(idx) }
func (l *workerLog) FlushSent() error            { return (*worker)(l).flushSent() }
func (l *workerLog) Request(q *rawlog.Request)   { (*worker)(l).logRequest(q) }
func (l *workerLog) Done(q *rawlog.Request)      { (*worker)(l).logDone(q) }
func (l *workerLog) Fail(err error)              { (*worker)(l).fail(err) }
func (l *workerLog) DurationElapsed()            { (*worker)(l).durationElapsed() }
func (l *workerLog) DurationAbort()              { (*worker)(l).durationAbort() }
func (l *workerLog) Flush()                      { l.sink.kick() }
