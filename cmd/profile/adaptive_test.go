package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/tokenizer"
)

// kneeMock is mockllm with a capacity knee: batch requests at once, a FIFO queue beyond.
func kneeMock(t *testing.T, batch int, itl time.Duration) string {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	o := mockllm.DefaultOptions()
	o.Tokenizer, o.TTFT, o.ITL, o.MaxBatch = tok, 20*time.Millisecond, itl, batch
	mock, err := mockllm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mock)
	t.Cleanup(func() { srv.Close(); mock.Close() })
	return srv.URL
}

// TestAdaptiveScaleFindsTheKnee: against a server with 4 batch slots, a TTFT p95 bound that
// queueing breaks is found within one run: the boundary is near the knee (a fifth request
// queues for only part of a request's time, so 5 may still pass), the sustain
// completes, exit 0, both artifacts are written, and every judged window's TTFT p95
// recomputed from profile_export.jsonl's records sent inside it is the event's value.
func TestAdaptiveScaleFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run")
	}
	// A request takes about 20 + 5×40 ms; one that queues waits about that long more: TTFT
	// p95 ~20 ms at 4 or fewer, ~240 ms past the knee, and the bound in between leaves a
	// loaded machine its noise.
	url := kneeMock(t, 4, 40*time.Millisecond)
	r := runProfile(t, url, "--benchmark-duration", "30", "--output-tokens-mean", "6", "--adaptive-scale",
		"--adaptive-scale-control", "concurrency:1,16:int", "--adaptive-scale-sla", "ttft:p95:le:150",
		"--adaptive-scale-assessment-period", "1", "--adaptive-sustain-duration", "2", "--adaptive-min-completed-requests", "8")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	dir := artifactDir(t, r.dir)
	sum, err := adaptive.ReadSummary(filepath.Join(dir, adaptive.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != adaptive.StatusComplete || sum.BoundaryValue == nil || *sum.BoundaryValue < 2 || *sum.BoundaryValue > 6 ||
		sum.SustainWindowsPassed < 2 || sum.ControlVariable != adaptive.Concurrency {
		b, _ := json.Marshal(sum)
		t.Fatalf("summary %s\nstderr:\n%s", b, r.stderr)
	}
	if !strings.Contains(r.stderr, "adaptive scale complete") {
		t.Fatalf("no outcome line:\n%s", r.stderr)
	}
	events := readEvents(t, dir)
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Event]++
	}
	for _, k := range []string{adaptive.PhaseStarted, adaptive.Window, adaptive.Decision, adaptive.BoundaryFound, adaptive.SustainStarted, adaptive.Complete} {
		if kinds[k] == 0 {
			t.Fatalf("no %s event: %v", k, kinds)
		}
	}
	recs := readExport(t, dir)
	judged := 0
	for _, e := range events {
		if e.Event != adaptive.Window || e.Passed == nil {
			continue
		}
		judged++
		var ttft []float64
		for _, q := range recs {
			if q.start >= e.WindowStartNs && q.start < e.WindowEndNs && !math.IsNaN(q.ttft) {
				ttft = append(ttft, q.ttft)
			}
		}
		slices.Sort(ttft)
		want := e.SLAValues["ttft:p95"]
		got := stats.PercentileSorted(ttft, 95)
		if len(ttft) != e.CompletedRequests || math.Abs(got-want) > 0.05*want {
			t.Fatalf("window %d [%d, %d): %d records in the export, ttft p95 %.3f; the event says %d requests, %.3f",
				e.WindowIndex, e.WindowStartNs, e.WindowEndNs, len(ttft), got, e.CompletedRequests, want)
		}
	}
	if judged < 3 {
		t.Fatalf("%d judged windows", judged)
	}
}

// TestAdaptiveScaleUsers: the control variable users of a user-centric plan (--num-users
// compiled at the control's maximum, each user on its own grid of --num-users over
// --user-centric-rate). A request takes about 20 + 5×40 ms and a user sends one every
// 6/20 s = 300 ms, the users 50 ms apart: up to 4 users never overlap more than 4 requests,
// the server's batch; a fifth queues. The run finds a boundary near 4, sustains it and exits
// 0, the events and the summary naming users.
func TestAdaptiveScaleUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run")
	}
	url := kneeMock(t, 4, 40*time.Millisecond)
	r := runProfile(t, url, "--benchmark-duration", "30", "--output-tokens-mean", "6", "--conversation-turn-mean", "2",
		"--user-centric-rate", "20", "--num-users", "6", "--adaptive-scale",
		"--adaptive-scale-control", "users:1,6", "--adaptive-scale-sla", "ttft:p95:le:150",
		"--adaptive-scale-assessment-period", "1", "--adaptive-sustain-duration", "2", "--adaptive-min-completed-requests", "3")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	dir := artifactDir(t, r.dir)
	sum, err := adaptive.ReadSummary(filepath.Join(dir, adaptive.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != adaptive.StatusComplete || sum.BoundaryValue == nil || *sum.BoundaryValue < 2 || *sum.BoundaryValue > 5 ||
		sum.SustainWindowsPassed < 2 || sum.ControlVariable != adaptive.Users {
		b, _ := json.Marshal(sum)
		var ws []string
		for _, e := range readEvents(t, dir) {
			if e.Event == adaptive.Window && e.ControlValue != nil {
				ws = append(ws, fmt.Sprintf("%v:%v:%d:%.0f", *e.ControlValue, e.Passed != nil && *e.Passed, e.CompletedRequests, e.SLAValues["ttft:p95"]))
			}
		}
		t.Fatalf("summary %s\nwindows (value:passed:requests:ttft p95) %v\nstderr:\n%s", b, ws, r.stderr)
	}
	// The users gate thinned out the sessions of the users above the value in force: fewer
	// requests went out than the plan's 20/s over the run.
	if recs := readExport(t, dir); len(recs) == 0 || len(recs) > 20*30*5/6 {
		t.Fatalf("%d requests in the export of a 20/s plan of 6 users gated to fewer", len(recs))
	}
	for _, e := range readEvents(t, dir) {
		if e.Event == adaptive.PhaseStarted && e.ControlVariable != "" && e.ControlVariable != adaptive.Users {
			t.Fatalf("event %+v: control variable %q", e, e.ControlVariable)
		}
	}
}

// TestAdaptiveScaleFailsAtTheMinimum: an SLA no window can meet fails the search at its
// minimum: status failed, exit 1, the run stopped early, both artifacts written.
func TestAdaptiveScaleFailsAtTheMinimum(t *testing.T) {
	url := kneeMock(t, 4, 15*time.Millisecond)
	r := runProfile(t, url, "--benchmark-duration", "30", "--output-tokens-mean", "3", "--adaptive-scale",
		"--adaptive-scale-control", "concurrency:2,8", "--adaptive-scale-sla", "ttft:p95:le:1",
		"--adaptive-scale-assessment-period", "1", "--adaptive-min-completed-requests", "3")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "replay: interrupted") {
		t.Fatalf("the run was not stopped:\n%s", r.stderr)
	}
	dir := artifactDir(t, r.dir)
	sum, err := adaptive.ReadSummary(filepath.Join(dir, adaptive.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != adaptive.StatusFailed || sum.FirstFailingValue == nil || *sum.FirstFailingValue != 2 || sum.BoundaryValue != nil {
		t.Fatalf("summary %+v", sum)
	}
	// The controller stopped the run once the search failed: well before its 30 s.
	if ev := readEvents(t, dir); ev[len(ev)-1].Event != adaptive.Failed || ev[len(ev)-1].TimestampNs > int64(25*time.Second) {
		t.Fatalf("last event %+v", ev[len(ev)-1])
	}
}

// Bad adaptive flags exit 2 naming the flag, before anything runs.
func TestAdaptiveScaleBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--adaptive-scale-sla", "ttft:p95:le:100"}, "--adaptive-scale-sla needs --adaptive-scale"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:4,2", "--adaptive-scale-sla", "ttft:p95:le:1"}, "--adaptive-scale-control"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "batch:1,4", "--adaptive-scale-sla", "ttft:p95:le:1"}, "unknown variable"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "users:1,4", "--adaptive-scale-sla", "ttft:p95:le:1"}, "user-centric"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "users:1,8", "--adaptive-scale-sla", "ttft:p95:le:1", "--user-centric-rate", "8", "--num-users", "4", "--conversation-turn-mean", "2"}, "--num-users 4 is below"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,4"}, "--adaptive-scale-sla"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,4", "--adaptive-scale-sla", "ttft:p95:about:1"}, "--adaptive-scale-sla"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,4", "--adaptive-scale-sla", "ttfx:p95:le:1"}, "ttfx"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,4", "--adaptive-scale-sla", "ttft:p95:le:1", "--adaptive-step-policy", "wild"}, "--adaptive-step-policy"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,4", "--adaptive-scale-sla", "ttft:p95:le:1", "--adaptive-assessment-period", "-1"}, "--adaptive-scale-assessment-period"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,8", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "4"}, "--concurrency 4 is below"},
		{[]string{"--adaptive-scale", "--adaptive-scale-control", "concurrency:1,8", "--adaptive-scale-sla", "ttft:p95:le:1", "--concurrency", "4,8"}, "one run"},
	} {
		args := append([]string{"--benchmark-duration", "5"}, tc.args...)
		r := runProfile(t, "http://127.0.0.1:1", args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// artifactDir is the one artifact directory under dir.
func artifactDir(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*", adaptive.EventsFile))
	if len(m) != 1 {
		t.Fatalf("%s in %s: %v", adaptive.EventsFile, dir, m)
	}
	return filepath.Dir(m[0])
}

func readEvents(t *testing.T, dir string) []adaptive.Event {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, adaptive.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ev, err := adaptive.ReadEvents(f, adaptive.EventsFile)
	if err != nil || len(ev) == 0 {
		t.Fatalf("%d events, %v", len(ev), err)
	}
	return ev
}

type exportRec struct {
	start int64
	ttft  float64 // ms; NaN when none
}

// readExport reads request_start_ns and time_to_first_token of profile_export.jsonl.
func readExport(t *testing.T, dir string) []exportRec {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []exportRec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Metadata struct {
				Start *int64 `json:"request_start_ns"`
			} `json:"metadata"`
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Metadata.Start == nil {
			continue
		}
		r := exportRec{start: *line.Metadata.Start, ttft: math.NaN()}
		if m, ok := line.Metrics["time_to_first_token"]; ok {
			if err := json.Unmarshal(m.Value, &r.ttft); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	return out
}

// TestAdaptiveScaleRequestRate: request-rate control thins the plan's Poisson arrivals at the
// ceiling: the search moves the rate, each window's send rate follows the control value, and
// the gaps between sends inside each window stay exponential (coefficient of variation ≈ 1,
// pooled over the windows with each gap taken relative to its window's mean).
func TestAdaptiveScaleRequestRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 s run")
	}
	url := kneeMock(t, 64, 15*time.Millisecond)
	r := runProfile(t, url, "--benchmark-duration", "16", "--output-tokens-mean", "2", "--adaptive-scale",
		"--adaptive-scale-control", "request_rate:10,80", "--adaptive-scale-sla", "error_rate:avg:le:0.5",
		"--adaptive-scale-assessment-period", "2", "--adaptive-sustain-duration", "4", "--adaptive-min-completed-requests", "5")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	dir := artifactDir(t, r.dir)
	recs := readExport(t, dir)
	var rel []float64
	levels := 0
	for _, e := range readEvents(t, dir) {
		if e.Event != adaptive.Window || e.Passed == nil {
			continue
		}
		var starts []int64
		for _, q := range recs {
			if q.start >= e.WindowStartNs && q.start < e.WindowEndNs {
				starts = append(starts, q.start)
			}
		}
		slices.Sort(starts)
		secs := float64(e.WindowEndNs-e.WindowStartNs) / 1e9
		want := *e.ControlValue * secs
		if got := float64(len(starts)); math.Abs(got-want) > 4*math.Sqrt(want)+2 {
			t.Errorf("window %d at %v/s over %.1f s: %d sends, want about %.0f", e.WindowIndex, *e.ControlValue, secs, len(starts), want)
		}
		if len(starts) < 3 {
			continue
		}
		levels++
		mean := float64(starts[len(starts)-1]-starts[0]) / float64(len(starts)-1)
		for i := 1; i < len(starts); i++ {
			rel = append(rel, float64(starts[i]-starts[i-1])/mean)
		}
	}
	if levels < 3 || len(rel) < 100 {
		t.Fatalf("%d windows, %d gaps", levels, len(rel))
	}
	var sum, sq float64
	for _, g := range rel {
		sum += g
		sq += g * g
	}
	n := float64(len(rel))
	cv := math.Sqrt(sq/n-(sum/n)*(sum/n)) / (sum / n)
	if math.Abs(cv-1) > 0.2 {
		t.Fatalf("gap coefficient of variation %.2f over %d gaps, want ≈ 1 (Poisson)", cv, len(rel))
	}
}
