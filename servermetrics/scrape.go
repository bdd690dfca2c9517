package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// Target is one endpoint to scrape.
type Target struct {
	URL  string
	Role string // RoleServer or RoleGPU
}

// MaxPageBytes bounds one metrics page: a longer one is cut at the last whole family
// before it (see selectFamilies), once said.
const MaxPageBytes = 32 << 20

// Config configures a scraper.
type Config struct {
	Targets []Target
	// Interval is the scrape period (0: DefaultInterval).
	Interval time.Duration
	// Timeout bounds one scrape, reading and parsing the page (0: the larger of Interval and
	// 2 s). It is also the most the end of a run waits for the final scrapes.
	Timeout time.Duration
	// MaxSeries caps the series recorded of one endpoint (0: DefaultMaxSeries); MaxPageBytes
	// the bytes read of one page (0: MaxPageBytes).
	MaxSeries    int
	MaxPageBytes int
	// IdleAbove is the page size past which the rest of a page is read, and all of it
	// parsed, on a thread at the lowest priority (0: 1 MiB; negative: never, for tests
	// about something else on a machine whose CPUs are all busy).
	IdleAbove int
	// Client makes the requests (nil: a client of its own, no proxy from the environment
	// for loopback targets).
	Client *http.Client
	// Out receives every scrape; required.
	Out *Writer
	// GPU receives the GPU fields of every DCGM page (RoleGPU targets), nil to skip; GPUs
	// the GPUs of an endpoint's first good page. Both are called from one goroutine at a time.
	GPU  func(rawlog.GPUSample) error
	GPUs func(url string, gpus []DCGMGPU)
	// Notice receives one-line warnings (an endpoint dropped, unreachable, a page over the
	// caps, scrapes spaced out), each said once, URLs redacted; nil discards. They are also
	// Notes of Out.
	Notice func(string)
	// Abort, when closed, ends every scrape at once and Run without the final scrapes (a
	// second Ctrl-C); nil never aborts.
	Abort <-chan struct{}
}

// Run scrapes every target: once at once (the baseline, before the first send when start
// is ahead), then at start + k·Interval, then once more when stop is closed (after the last
// response). Each target has its own goroutine, so a slow endpoint delays only itself; a
// page over lightPageBytes is read on and parsed by an OS thread of its own at the lowest
// scheduling priority (SCHED_IDLE on Linux), so that a huge page never takes a CPU from a
// worker that wants it. A scrape
// in flight when stop closes is abandoned for the final one, and a scrape of duration d is
// followed by none for 2d, so that at most a third of the time goes to scraping. Run
// returns when every final scrape is written, at most Timeout after stop closes (at once
// when Abort closes); its error is the first write error.
func Run(cfg Config, start time.Time, stop <-chan struct{}) error {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = max(cfg.Interval, 2*time.Second)
	}
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = DefaultMaxSeries
	}
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = MaxPageBytes
	}
	if cfg.IdleAbove == 0 {
		cfg.IdleAbove = lightPageBytes
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}}
	}
	// runCtx ends with stop (the periodic scrapes), abortCtx with Abort (all of them).
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	runCtx, endRun := context.WithCancel(abortCtx)
	defer endRun()
	go func() {
		select {
		case <-stop:
			endRun()
		case <-abortCtx.Done():
		}
	}()
	if cfg.Abort != nil {
		go func() {
			select {
			case <-cfg.Abort:
				abort()
			case <-abortCtx.Done():
			}
		}()
	}
	var gpuMu sync.Mutex
	errs := make([]error, len(cfg.Targets))
	var wg sync.WaitGroup
	for i, t := range cfg.Targets {
		if err := cfg.Out.Endpoint(EndpointInfo{ID: i, URL: t.URL, Role: t.Role}); err != nil {
			return err
		}
	}
	for i, t := range cfg.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := &endpointState{cfg: &cfg, id: i, url: t.URL, role: t.Role, start: start, gpuMu: &gpuMu}
			errs[i] = e.loop(runCtx, abortCtx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

type endpointState struct {
	cfg      *Config
	id       int
	url      string
	role     string
	start    time.Time
	gpuMu    *sync.Mutex
	retried  bool // a JSON /metrics was retried at /prometheus/metrics
	dropped  bool
	failing  bool // the last scrape failed (warned once per run of failures)
	gpusSeen bool
	// Said once each: a page over the series cap, over the byte cap, a series over the
	// file's cap, scrapes spaced out by their duration.
	saidSeries, saidBytes, saidFile, saidSlow bool
	page, sel                                 []byte        // the page read, and what of it is parsed (kept between scrapes)
	heavy                                     chan struct{} // closed when the last page job on an idle thread ended
	cache                                     familyCache   // the last light page's families (delta.go)
}

// loop scrapes until run ends, then once more (the final scrape) unless abort ended too.
func (e *endpointState) loop(run, abort context.Context) error {
	iv := e.cfg.Interval
	d, err := e.scrape(run, PhaseBaseline)
	if err != nil {
		return err
	}
	earliest := time.Now().Add(2 * d) // a slow scrape's spacing
	for {
		if e.dropped {
			<-run.Done()
			return nil
		}
		if run.Err() != nil {
			break
		}
		k := int64(0)
		if d := time.Since(e.start); d >= 0 {
			k = int64(d/iv) + 1
		}
		if gap := earliest.Sub(e.start); gap > 0 {
			k = max(k, int64((gap+iv-1)/iv))
		}
		t := time.NewTimer(time.Until(e.start.Add(time.Duration(k) * iv)))
		select {
		case <-run.Done():
			t.Stop()
		case <-t.C:
		}
		if run.Err() != nil {
			break
		}
		if d, err = e.scrape(run, PhaseRun); err != nil {
			return err
		}
		earliest = time.Now().Add(2 * d)
		if 3*d > iv && !e.saidSlow {
			e.saidSlow = true
			if err := e.notice(fmt.Sprintf("server metrics %s: a scrape took %v (interval %v): the next waits twice that, so that scraping takes at most a third of the time (said once)",
				e.url, d.Round(time.Millisecond), iv)); err != nil {
				return err
			}
		}
	}
	if abort.Err() != nil {
		return nil
	}
	_, err = e.scrape(abort, PhaseFinal)
	return err
}

// notice says msg, its URLs redacted, to Notice and in the file.
func (e *endpointState) notice(msg string) error {
	msg = redact.Text(msg)
	if e.cfg.Notice != nil {
		e.cfg.Notice(msg)
	}
	return e.cfg.Out.Note(Note{Endpoint: e.id, TimeNs: int64(time.Since(e.start)), Message: msg})
}

// scrape reads the endpoint once, within Timeout and until parent ends, and records it; it
// returns how long it took. Only a write error is returned: a scrape that parent ended is
// dropped without a word.
func (e *endpointState) scrape(parent context.Context, phase string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(parent, e.cfg.Timeout)
	defer cancel()
	t0 := time.Now()
	body, t1, samples, st, err := e.fetch(ctx, phase != PhaseRun)
	took := time.Since(t0)
	if err != nil && parent.Err() != nil {
		return took, nil // abandoned for the final scrape, or aborted
	}
	if errors.Is(err, ErrJSON) && !e.retried && strings.HasSuffix(e.url, "/metrics") {
		// TensorRT-LLM serves JSON at /metrics and Prometheus text at /prometheus/metrics.
		e.retried = true
		next := strings.TrimSuffix(e.url, "/metrics") + "/prometheus/metrics"
		if nerr := e.notice(fmt.Sprintf("server metrics %s: the page is JSON; trying %s", e.url, next)); nerr != nil {
			return took, nerr
		}
		e.url = next
		d, err := e.scrape(parent, phase)
		return took + d, err
	}
	if errors.Is(err, ErrNotPrometheus) {
		e.dropped = true
		return took, e.notice(fmt.Sprintf("server metrics %s: %v; not scraped again in this run", e.url, err))
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no whole page within the %v scrape timeout (%w)", e.cfg.Timeout, err)
		}
		if e.failing {
			return took, nil
		}
		e.failing = true
		return took, e.notice(fmt.Sprintf("server metrics %s: %v (still tried every interval; warned once until it answers)", e.url, err))
	}
	e.failing = false
	if err := e.sayCapped(&st, len(body)); err != nil {
		return took, err
	}
	d := t1.Sub(t0)
	mid := int64(t0.Sub(e.start) + d/2)
	dropped, err := e.cfg.Out.ScrapeLimited(e.id, phase, mid, e.start.UnixNano()+mid, int64(d), samples, e.cfg.MaxSeries)
	if err != nil {
		return took, err
	}
	if dropped > 0 && !e.saidFile {
		e.saidFile = true
		if err := e.notice(fmt.Sprintf("server metrics %s: more than %d series over the run (labels that keep changing?): series past the cap are not recorded (said once)", e.url, e.cfg.MaxSeries)); err != nil {
			return took, err
		}
	}
	if e.role == RoleGPU && e.cfg.GPU != nil {
		gs, gpus := DCGMSamples(samples, mid)
		e.gpuMu.Lock()
		defer e.gpuMu.Unlock()
		if !e.gpusSeen && len(gpus) > 0 && e.cfg.GPUs != nil {
			e.gpusSeen = true
			e.cfg.GPUs(e.url, gpus)
		}
		for _, g := range gs {
			if err := e.cfg.GPU(g); err != nil {
				return took, err
			}
		}
	}
	return took, nil
}

// sayCapped says, once each, that a page was over the byte cap or the series cap.
func (e *endpointState) sayCapped(st *pageStats, n int) error {
	if st.cut && !e.saidBytes {
		e.saidBytes = true
		if err := e.notice(fmt.Sprintf("server metrics %s: the page is larger than %d bytes: its first %d bytes are parsed, whole families only, the rest is not recorded (said once)",
			e.url, e.cfg.MaxPageBytes, n)); err != nil {
			return err
		}
	}
	if st.lines > e.cfg.MaxSeries && !e.saidSeries {
		e.saidSeries = true
		msg := fmt.Sprintf("server metrics %s: the page has %d series, over the cap of %d: %d kept, whole families, the known ones first (said once)",
			e.url, st.lines, e.cfg.MaxSeries, st.kept)
		if len(st.knownDropped) > 0 {
			msg += "; too large to keep: " + strings.Join(st.knownDropped[:min(len(st.knownDropped), 5)], ", ")
		}
		return e.notice(msg)
	}
	return nil
}

// lightPageBytes is the most of a page read and parsed at the coordinator's own priority:
// the rest of a larger page, and all of its parsing, go to a thread at the lowest
// (onIdleThread). A server's page is a few hundred kB.
const lightPageBytes = 1 << 20

// fetch reads the page within ctx into e.page (at most MaxPageBytes of it, cut after its
// last whole line) and parses what selectFamilies keeps of it: all of that when all is set
// (the baseline and final scrapes), else only its known families (knownFamily: the
// periodic scrapes record what analyze reads over the run, the rest is in the first and
// last scrape). t1 is when the read ended;
// body is what was read.
func (e *endpointState) fetch(ctx context.Context, all bool) (body []byte, t1 time.Time, samples []Sample, st pageStats, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return nil, t1, nil, st, err
	}
	// Text first: every server here serves it, and its parser is the cheaper one.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return nil, time.Now(), nil, st, err
	}
	closeBody := true
	defer func() {
		if closeBody {
			resp.Body.Close()
		}
	}()
	buf := bytes.NewBuffer(e.page[:0])
	// A gzip page is inflated by the transport as it is read: the cap is on what it inflates to.
	light := e.cfg.IdleAbove
	if light < 0 {
		light = e.cfg.MaxPageBytes + 1
	}
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, int64(min(e.cfg.MaxPageBytes+1, light))))
	e.page = buf.Bytes()
	t1 = time.Now()
	if err != nil {
		return nil, t1, nil, st, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, t1, nil, st, fmt.Errorf("%w: HTTP 404%s, nothing served there", ErrNotPrometheus, serverSays(buf.Bytes()))
	}
	if resp.StatusCode/100 != 2 {
		return nil, t1, nil, st, fmt.Errorf("HTTP %d%s", resp.StatusCode, serverSays(buf.Bytes()))
	}
	j := &pageJob{ctx: ctx, body: resp.Body, buf: buf, sel: e.sel, ctype: resp.Header.Get("Content-Type"),
		limit: e.cfg.MaxPageBytes, maxSeries: e.cfg.MaxSeries, t1: t1, light: light}
	if buf.Len() < light || light > e.cfg.MaxPageBytes {
		// Parsed here, one scrape at a time: the family cache may serve it. (A job on an
		// idle thread may outlive its scrape, so it parses the page whole.)
		j.cache = &e.cache
		j.knownOnly = !all
		j.run()
	} else {
		// The rest on a thread at the lowest priority, which may get no CPU while the
		// machine is busy: the scrape ends with its deadline all the same, leaving the job
		// to end when it runs (it then sees the deadline passed). One such job per
		// endpoint at most, so a busy machine piles none up.
		if e.heavy != nil {
			select {
			case <-e.heavy:
			default:
				return nil, t1, nil, st, errors.New("the CPUs were too busy to parse the large page before yet")
			}
		}
		closeBody = false
		done := make(chan struct{})
		e.heavy = done
		go func() {
			defer close(done)
			defer resp.Body.Close()
			onIdleThread(j.run)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			e.page, e.sel = nil, nil // the job's now
			return nil, time.Now(), nil, st, ctx.Err()
		}
	}
	e.page, e.sel = j.buf.Bytes(), j.sel
	return j.page, j.t1, j.samples, j.st, j.err
}

// pageJob reads the rest of a page (past what fetch read), selects and parses it.
type pageJob struct {
	ctx       context.Context
	body      io.Reader
	buf       *bytes.Buffer // the page so far
	sel       []byte        // a buffer for selectFamilies
	ctype     string
	limit     int
	maxSeries int
	light     int // what fetch read before handing the page over
	cache     *familyCache
	knownOnly bool // parse only the known families (with cache)
	// Results.
	t1      time.Time
	page    []byte
	samples []Sample
	st      pageStats
	err     error
}

func (j *pageJob) run() {
	if j.buf.Len() == j.light && j.limit+1 > j.light {
		if _, j.err = j.buf.ReadFrom(io.LimitReader(j.body, int64(j.limit+1-j.light))); j.err != nil {
			return
		}
		j.t1 = time.Now()
	}
	j.page = j.buf.Bytes()
	cut := false
	if len(j.page) > j.limit {
		j.page, cut = j.page[:j.limit], true
		if i := bytes.LastIndexByte(j.page, '\n'); i >= 0 {
			j.page = j.page[:i+1]
		} else {
			j.page = j.page[:0]
		}
	}
	if looksJSON(j.page, j.ctype) {
		j.err = ErrJSON
		return
	}
	var sel []byte
	sel, j.st = selectFamilies(j.sel[:0], j.page, j.maxSeries, cut)
	if j.st.capped() {
		if cut && isOpenMetrics(j.ctype) && !bytes.HasSuffix(sel, []byte("# EOF\n")) {
			sel = append(sel, "# EOF\n"...) // the page's own end marker was past the cut
		}
		j.sel = sel // its own buffer, kept for the next scrape
	}
	if j.cache != nil {
		if j.knownOnly {
			sel = j.cache.known(sel)
		}
		j.samples, j.err = j.cache.parse(j.ctx, sel, j.ctype)
	} else {
		j.samples, j.err = parse(j.ctx, sel, j.ctype)
	}
}

// serverSays is `: "<the server's own message>"` from a non-2xx page (llama.cpp's /metrics
// without --metrics: "... Start it with `--metrics`"), redacted; "" when it says nothing.
func serverSays(body []byte) string {
	if m := endpoint.ErrorMessage(body); m != "" {
		return fmt.Sprintf(": %q", redact.Text(m))
	}
	return ""
}
