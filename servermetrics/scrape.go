package servermetrics

import (
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

// MaxPageBytes bounds one metrics page; a longer one is cut and fails to parse.
const MaxPageBytes = 32 << 20

// Config configures a scraper.
type Config struct {
	Targets []Target
	// Interval is the scrape period (0: DefaultInterval).
	Interval time.Duration
	// Timeout bounds one scrape (0: the larger of Interval and 2 s).
	Timeout time.Duration
	// Client makes the requests (nil: a client of its own, no proxy from the environment
	// for loopback targets).
	Client *http.Client
	// Out receives every scrape; required.
	Out *Writer
	// GPU receives the GPU fields of every DCGM page (RoleGPU targets), nil to skip; GPUs
	// the GPUs of an endpoint's first good page. Both are called from one goroutine at a time.
	GPU  func(rawlog.GPUSample) error
	GPUs func(url string, gpus []DCGMGPU)
	// Notice receives one-line warnings (an endpoint dropped, unreachable); nil discards.
	Notice func(string)
}

// Run scrapes every target: once at once (the baseline, before the first send when start
// is ahead), then at start + k·Interval, then once more when stop is closed (after the last
// response). Each target has its own goroutine, so a slow endpoint delays only itself. Run
// returns when every final scrape is written; its error is the first write error.
func Run(cfg Config, start time.Time, stop <-chan struct{}) error {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = max(cfg.Interval, 2*time.Second)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}}
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
			errs[i] = e.loop(stop)
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
}

func (e *endpointState) loop(stop <-chan struct{}) error {
	if err := e.scrape(PhaseBaseline); err != nil {
		return err
	}
	iv := e.cfg.Interval
	for {
		if e.dropped {
			<-stop
			return nil
		}
		k := int64(0)
		if d := time.Since(e.start); d >= 0 {
			k = int64(d/iv) + 1
		}
		t := time.NewTimer(time.Until(e.start.Add(time.Duration(k) * iv)))
		select {
		case <-stop:
			t.Stop()
			return e.scrape(PhaseFinal)
		case <-t.C:
		}
		if err := e.scrape(PhaseRun); err != nil {
			return err
		}
	}
}

func (e *endpointState) notice(msg string) error {
	if e.cfg.Notice != nil {
		e.cfg.Notice(msg)
	}
	return e.cfg.Out.Note(Note{Endpoint: e.id, TimeNs: int64(time.Since(e.start)), Message: msg})
}

// scrape reads the endpoint once and records it; only a write error is returned.
func (e *endpointState) scrape(phase string) error {
	t0 := time.Now()
	body, ctype, err := e.get()
	t1 := time.Now()
	var samples []Sample
	if err == nil {
		samples, err = Parse(body, ctype)
	}
	if errors.Is(err, ErrJSON) && !e.retried && strings.HasSuffix(e.url, "/metrics") {
		// TensorRT-LLM serves JSON at /metrics and Prometheus text at /prometheus/metrics.
		e.retried = true
		next := strings.TrimSuffix(e.url, "/metrics") + "/prometheus/metrics"
		if nerr := e.notice(fmt.Sprintf("server metrics %s: the page is JSON; trying %s", e.url, next)); nerr != nil {
			return nerr
		}
		e.url = next
		return e.scrape(phase)
	}
	if errors.Is(err, ErrNotPrometheus) {
		e.dropped = true
		return e.notice(fmt.Sprintf("server metrics %s: %v; not scraped again in this run", e.url, err))
	}
	if err != nil {
		if e.failing {
			return nil
		}
		e.failing = true
		return e.notice(fmt.Sprintf("server metrics %s: %v (still tried every interval; warned once until it answers)", e.url, err))
	}
	e.failing = false
	d := t1.Sub(t0)
	mid := int64(t0.Sub(e.start) + d/2)
	if err := e.cfg.Out.Scrape(e.id, phase, mid, e.start.UnixNano()+mid, int64(d), samples); err != nil {
		return err
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
				return err
			}
		}
	}
	return nil
}

func (e *endpointState) get() ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return nil, "", err
	}
	// Text first: every server here serves it, and its parser is the cheaper one.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPageBytes+1))
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, "", fmt.Errorf("%w: HTTP 404%s, nothing served there", ErrNotPrometheus, serverSays(body))
	}
	if resp.StatusCode/100 != 2 {
		return nil, "", fmt.Errorf("HTTP %d%s", resp.StatusCode, serverSays(body))
	}
	if len(body) > MaxPageBytes {
		return nil, "", fmt.Errorf("%w: page larger than %d bytes", ErrNotPrometheus, MaxPageBytes)
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// serverSays is `: "<the server's own message>"` from a non-2xx page (llama.cpp's /metrics
// without --metrics: "... Start it with `--metrics`"), redacted; "" when it says nothing.
func serverSays(body []byte) string {
	if m := endpoint.ErrorMessage(body); m != "" {
		return fmt.Sprintf(": %q", redact.Text(m))
	}
	return ""
}
