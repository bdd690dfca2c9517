package servermetrics

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
)

// Metrics pages are outside bytes: these are endpoints that misbehave the way real ones do,
// and what the scraper must still guarantee (bounded time after stop, bounded cost, the
// known families kept, each cap said once).

// junkPage is a page of n series of one family unknown to the table, each line about
// lineBytes long; known (a page of known families) goes after them, where a cap in page
// order would lose it.
func junkPage(n, lineBytes int, known string) []byte {
	var b bytes.Buffer
	b.WriteString("# HELP junk_metric A family nobody reports on.\n# TYPE junk_metric gauge\n")
	pad := strings.Repeat("p", max(lineBytes-40, 0))
	for i := range n {
		fmt.Fprintf(&b, "junk_metric{id=\"%d\",pad=\"%s\"} %d\n", i, pad, i)
	}
	b.WriteString(known)
	return b.Bytes()
}

// scrapeRun runs the scraper on one endpoint with cfg (Targets, Out and Notice filled in)
// until stopAfter (0: once the baseline scrape is written), and returns the file read back,
// the notices, and how long Run took after stop closed.
type scrapeResult struct {
	f        *File
	notices  []string
	afterEnd time.Duration
}

func scrapeRun(t *testing.T, url string, cfg Config, stopAfter time.Duration) scrapeResult {
	t.Helper()
	buf := &lineSignal{scrape: make(chan struct{})}
	out, err := NewWriter(buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var res scrapeResult
	cfg.Targets = []Target{{URL: url, Role: RoleServer}}
	cfg.Out = out
	cfg.Notice = func(s string) { mu.Lock(); res.notices = append(res.notices, s); mu.Unlock() }
	stop := make(chan struct{})
	var stopped time.Time
	go func() {
		if stopAfter == 0 {
			select { // a scraper that never writes one fails the test instead of hanging it
			case <-buf.scrape:
			case <-time.After(2 * time.Minute): // -race on a saturated machine parses slowly
			}
		}
		time.Sleep(stopAfter)
		mu.Lock()
		stopped = time.Now()
		mu.Unlock()
		close(stop)
	}()
	if err := Run(cfg, time.Now(), stop); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	res.afterEnd = time.Since(stopped)
	mu.Unlock()
	if res.f, err = Read(bytes.NewReader(buf.b.Bytes())); err != nil {
		t.Fatal(err)
	}
	return res
}

// lineSignal is a buffer that closes scrape once a scrape line is written to it.
type lineSignal struct {
	mu     sync.Mutex
	b      bytes.Buffer
	scrape chan struct{}
	once   sync.Once
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte(`{"kind":"scrape"`)) {
		l.once.Do(func() { close(l.scrape) })
	}
	return l.b.Write(p)
}

// A page of 50,000 series and 30 MB: at most DefaultMaxSeries are recorded, the known
// families (at the end of the page) among them, whole (the 50,000-line family does not fit
// and is left out whole); the cap is said once, in a notice and in the file's notes,
// however many scrapes saw it.
func TestScrapeHugePageCapped(t *testing.T) {
	page := junkPage(50000, 610, vllmPage)
	if len(page) < 30e6 {
		t.Fatalf("page of %d bytes", len(page))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page)
	}))
	defer srv.Close()
	res := scrapeRun(t, srv.URL, Config{Interval: time.Hour, Timeout: time.Minute, IdleAbove: -1}, 0)
	if len(res.f.Scrapes) != 2 {
		t.Fatalf("%d scrapes, want the baseline and the final one; notices %q", len(res.f.Scrapes), res.notices)
	}
	if len(res.f.Series) > DefaultMaxSeries {
		t.Errorf("%d series recorded, over the cap of %d", len(res.f.Series), DefaultMaxSeries)
	}
	names := map[string]int{}
	for _, s := range res.f.Series {
		names[s.Name]++
	}
	for _, want := range []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:num_preemptions_total", "vllm:time_to_first_token_seconds_count", "vllm:time_to_first_token_seconds_sum"} {
		if names[want] != 1 {
			t.Errorf("known series %s recorded %d times", want, names[want])
		}
	}
	if names["vllm:time_to_first_token_seconds_bucket"] != 3 {
		t.Errorf("the TTFT histogram kept %d of its 3 buckets", names["vllm:time_to_first_token_seconds_bucket"])
	}
	said := 0
	for _, s := range res.notices {
		if strings.Contains(s, "series, over the cap") {
			said++
			if !strings.Contains(s, "the page has 50011 series, over the cap of 10000: 11 kept") {
				t.Errorf("notice %q", s)
			}
		}
	}
	notes := 0
	for _, x := range res.f.Notes {
		if strings.Contains(x.Message, "over the cap") {
			notes++
		}
	}
	if said != 1 || notes != 1 {
		t.Errorf("the cap said %d times, noted %d times; want once each: %q", said, notes, res.notices)
	}
}

// After stop closes, Run returns within one scrape timeout, however the endpoint
// misbehaves: one that never answers (a scrape in flight is abandoned for the final
// one, not waited for), one that trickles a byte at a time, one that sends a page without
// end, and one whose page takes longer than the timeout to parse. The bound is the timeout
// plus the machine's own scheduling noise over the test.
func TestScrapeStopWithinOneTimeout(t *testing.T) {
	big := junkPage(40000, 600, vllmPage) // parsed whole (MaxSeries below): 24 MB
	for _, c := range []struct {
		name    string
		serve   func(w http.ResponseWriter, r *http.Request)
		timeout time.Duration
		cfg     Config
	}{
		{"never answers", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}, 1500 * time.Millisecond, Config{Interval: 100 * time.Millisecond}},
		{"trickles", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("# TYPE g gauge\n"))
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte("#")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}, 1500 * time.Millisecond, Config{Interval: 100 * time.Millisecond}},
		{"trickles past a MiB", func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("# padding comment\n"), 2*lightPageBytes/18))
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte("#")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}, 1500 * time.Millisecond, Config{Interval: 100 * time.Millisecond}},
		{"endless page", func(w http.ResponseWriter, r *http.Request) {
			line := []byte("# a comment line that never ends the page\n")
			for r.Context().Err() == nil {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		}, 1500 * time.Millisecond, Config{Interval: 100 * time.Millisecond}},
		{"slow to parse", func(w http.ResponseWriter, r *http.Request) {
			w.Write(big)
		}, 200 * time.Millisecond, Config{Interval: time.Hour, MaxSeries: 1 << 30}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(c.serve))
			defer srv.Close()
			cfg := c.cfg
			cfg.Timeout = c.timeout
			s := noise.Start(-1)
			// Stop while a scrape is in flight: for the first three, a third of the way
			// into a run-phase scrape; for the last, during the baseline's parse.
			res := scrapeRun(t, srv.URL, cfg, c.timeout+c.timeout/3)
			late := s.Stop()
			bound := c.timeout + 100*time.Millisecond + 2*late.Max()
			if res.afterEnd > bound {
				t.Errorf("Run returned %v after stop, over one %v timeout (bound %v, the machine's worst sleep lateness %v)", res.afterEnd, c.timeout, bound, late.Max())
			}
			t.Logf("Run returned %v after stop (timeout %v)", res.afterEnd, c.timeout)
		})
	}
}

// A page over the byte cap is cut after its last whole family before the cap and parsed
// (not dropped for the run), said once; a gzip page is capped on what it inflates to, so a
// gzip bomb costs no more than a page at the cap.
func TestScrapeOverByteCap(t *testing.T) {
	// A gzip bomb: members concatenated inflate to their contents concatenated, so one
	// member of 1 MiB of comments, repeated, is a GiB from a few hundred kB.
	member := func(b []byte) []byte {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	zbomb := bytes.NewBuffer(member([]byte(vllmPage)))
	pad := member(bytes.Repeat([]byte("# padding comment\n"), 1<<20/18))
	for range 1024 {
		zbomb.Write(pad)
	}
	over := append([]byte(vllmPage), junkPage(2000, 100, "")...)
	over = append(over, "# TYPE late_metric gauge\nlate_metric 1\n"...)
	omOver := append([]byte(openMetricsPage[:strings.Index(openMetricsPage, "# EOF")]), junkPage(2000, 100, "# EOF\n")...)
	for _, c := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		limit int
	}{
		{"plain", func(w http.ResponseWriter, _ *http.Request) { w.Write(over) }, len(vllmPage) + 150*1000},
		{"OpenMetrics", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0")
			w.Write(omOver)
		}, 150 * 1000},
		{"gzip bomb", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(zbomb.Bytes())
		}, 4 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(c.serve))
			defer srv.Close()
			res := scrapeRun(t, srv.URL, Config{Interval: time.Hour, Timeout: time.Minute, MaxPageBytes: c.limit, IdleAbove: -1}, 0)
			if len(res.f.Scrapes) != 2 {
				t.Fatalf("%d scrapes, want 2; notices %q", len(res.f.Scrapes), res.notices)
			}
			names := map[string]bool{}
			for _, s := range res.f.Series {
				names[s.Name] = true
			}
			known := "vllm:kv_cache_usage_perc"
			if c.name == "OpenMetrics" {
				known = "vllm:num_preemptions_total"
			}
			if !names[known] || names["late_metric"] || names["junk_metric"] {
				t.Errorf("series kept: %s %v, junk (cut through) %v, late (past the cut) %v; notices %q", known, names[known], names["junk_metric"], names["late_metric"], res.notices)
			}
			said := 0
			for _, s := range res.notices {
				if strings.Contains(s, "larger than") {
					said++
				}
			}
			if said != 1 {
				t.Errorf("said %d times: %q", said, res.notices)
			}
		})
	}
}

// Scrapes never pile up on a slow endpoint: one that takes d is followed by none for 2d
// (at most a third of the time scraping, so a struggling server is not scraped back to
// back and the scraper's CPU stays bounded), said once.
func TestScrapeSpacedBySlowScrapes(t *testing.T) {
	const slow = 300 * time.Millisecond
	var mu sync.Mutex
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		time.Sleep(slow)
		w.Write([]byte(vllmPage))
	}))
	defer srv.Close()
	res := scrapeRun(t, srv.URL, Config{Interval: 20 * time.Millisecond, Timeout: 10 * time.Second}, 3*time.Second)
	mu.Lock()
	defer mu.Unlock()
	// The gaps between the starts of scrapes (the final one comes at stop).
	if len(times) < 3 {
		t.Fatalf("%d scrapes in 3 s", len(times))
	}
	for i := 1; i < len(times)-1; i++ {
		if gap := times[i].Sub(times[i-1]); gap < 3*slow {
			t.Errorf("scrape %d began %v after the previous, which took at least %v: want no sooner than 3 times that", i, gap, slow)
		}
	}
	said := 0
	for _, s := range res.notices {
		if strings.Contains(s, "the next waits twice that") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the spacing said %d times: %q", said, res.notices)
	}
}

// A page over lightPageBytes is read and parsed on a thread that runs only on an otherwise
// idle CPU (SCHED_IDLE), never at the priority of the replay workers beside it; a page of
// the usual size costs no thread of its own.
func TestScrapeOnIdleThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread policy is Linux's")
	}
	for _, c := range []struct {
		name string
		head []byte // sent before the server waits for the test to count
		want int
	}{
		{"usual page", nil, 0},
		{"huge page", bytes.Repeat([]byte("# padding comment\n"), 2*lightPageBytes/18), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			waitNoIdleThreads(t) // those of the tests before end a moment after their Run
			inScrape := make(chan struct{})
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write(c.head)
				w.(http.Flusher).Flush()
				select {
				case inScrape <- struct{}{}:
					<-release
				default:
				}
				w.Write([]byte(vllmPage))
			}))
			defer srv.Close()
			idle := -1
			go func() {
				<-inScrape
				// The scraper reads the head, then waits for the rest: on which thread?
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					if idle = idleThreads(t); idle == c.want || time.Now().After(deadline) {
						break
					}
				}
				close(release)
			}()
			// (Whether the huge page is then parsed in time depends on how busy the CPUs are:
			// that is the point.)
			scrapeRun(t, srv.URL, Config{Interval: time.Hour, Timeout: 2 * time.Second}, 0)
			if idle != c.want {
				t.Errorf("%d threads at SCHED_IDLE while the page was read, want %d", idle, c.want)
			}
			waitNoIdleThreads(t)
		})
	}
}

// waitNoIdleThreads waits until no thread is at SCHED_IDLE: a scraper's ends with its
// goroutine, which may outlive Run by a moment.
func waitNoIdleThreads(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); idleThreads(t) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			if pr := noise.ReadPressure(); !pr.Calm(10) {
				// By design the job is left to end when a CPU is free; on a saturated
				// machine a SCHED_IDLE thread may get none for longer than this.
				t.Skipf("%d threads still at SCHED_IDLE after Run: the machine is too busy for them to run (CPU pressure %.1f%%)", idleThreads(t), pr.CPU)
			}
			t.Fatalf("%d threads still at SCHED_IDLE after Run", idleThreads(t))
		}
	}
}

// idleThreads counts this process's threads whose policy is SCHED_IDLE (5): field 41 of
// /proc/self/task/TID/stat.
func idleThreads(t *testing.T) int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue
		}
		rest := b[bytes.LastIndexByte(b, ')')+2:] // after "pid (comm) ": field 3 on
		f := strings.Fields(string(rest))
		if len(f) > 38 {
			if p, _ := strconv.Atoi(f[38]); p == 5 {
				n++
			}
		}
	}
	return n
}

// Abort (a second Ctrl-C) ends Run at once: the scrape in flight is cut, and there is no
// final scrape.
func TestScrapeAbort(t *testing.T) {
	arrived := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	var buf bytes.Buffer
	out, _ := NewWriter(&buf, Header{})
	abort := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Run(Config{Targets: []Target{{URL: srv.URL, Role: RoleServer}}, Out: out, Interval: time.Hour, Timeout: time.Hour, Abort: abort}, time.Now(), stop)
	}()
	<-arrived
	close(stop) // the final scrape starts, and hangs like the baseline
	<-arrived
	close(abort)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after Abort")
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Scrapes) != 0 {
		t.Errorf("%d scrapes recorded", len(f.Scrapes))
	}
}
