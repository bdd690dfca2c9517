package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// The acceptance run, on synthetic logs of a server with TTFT 20 ms and ITL 5 ms at
// concurrency 16, 128/128 tokens.
func TestKnownServerTiming(t *testing.T) {
	sc := scenario{n: 64, workers: 4, ttft: 20 * ms, itl: 5 * ms, tokens: 128, concurrency: 16, streaming: true, cpuPct: 20}
	s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
	p50 := func(tag string) float64 {
		r, ok := s.Result(tag)
		if !ok {
			t.Fatalf("no %s", tag)
		}
		return r.Stats.P[4]
	}
	if v := p50("time_to_first_token"); v < 20 || v > 21.5 {
		t.Errorf("TTFT p50 %v ms; want within [20, 21.5]", v)
	}
	if v := p50("inter_token_latency"); v < 5 || v > 5.3 {
		t.Errorf("ITL p50 %v ms; want within [5.0, 5.3]", v)
	}
	if r, _ := s.Result("output_sequence_length"); r.Stats.Min != 128 || r.Stats.Max != 128 {
		t.Errorf("OSL %v..%v; want exactly 128", r.Stats.Min, r.Stats.Max)
	}
	if s.Counts.Errors != 0 || s.Counts.Valid != 64 {
		t.Errorf("counts %+v; want 64 valid, no errors", s.Counts)
	}
	if !s.Verdict.Kept {
		t.Errorf("verdict %+v; want kept", s.Verdict)
	}
}

// With 32 reasoning tokens first, TTFO exceeds TTFT by 32 ITLs.
func TestReasoningDelaysTTFO(t *testing.T) {
	sc := scenario{n: 16, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 128, reasoning: 32, concurrency: 16, streaming: true}
	_, records := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
	lines := bytes.Split(bytes.TrimSpace(records), []byte("\n"))
	if len(lines) != 16 {
		t.Fatalf("%d records; want 16", len(lines))
	}
	for _, l := range lines {
		var rec struct {
			Metrics map[string]struct{ Value any } `json:"metrics"`
		}
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatal(err)
		}
		v := func(tag string) float64 { return rec.Metrics[tag].Value.(float64) }
		diff, want := v("time_to_first_output_token")-v("time_to_first_token"), 32*v("inter_token_latency")
		if math.Abs(diff-want) > 0.05*want {
			t.Fatalf("TTFO − TTFT = %v ms; want 32 ITLs = %v ms ±5%%", diff, want)
		}
		if v("reasoning_token_count") != 32 || v("output_sequence_length") != 128 {
			t.Fatalf("reasoning %v OSL %v", v("reasoning_token_count"), v("output_sequence_length"))
		}
	}
}

// Injected server errors are counted exactly and fail the default error-rate gate.
func TestErrorCountAndGate(t *testing.T) {
	sc := scenario{n: 50, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 16, concurrency: 8, streaming: true, errEvery: 10}
	s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
	if s.Counts.Errors != 5 || len(s.Errors) != 1 || s.Errors[0].Kind != "http_500" || s.Errors[0].Count != 5 {
		t.Fatalf("errors %+v %+v; want 5 × http_500", s.Counts, s.Errors)
	}
	if r := CheckErrorRate(s, 0); r.OK || r.Rate != 0.1 {
		t.Fatalf("error rate %+v; want 0.1 failing the default gate", r)
	}
	if r := CheckErrorRate(s, 0.1); !r.OK {
		t.Fatalf("error rate %+v; want passing at 0.1", r)
	}
}

// Planned cancellations are errors (as in AIPerf) but do not fail the error-rate gate.
func TestPlannedCancellationsPassGate(t *testing.T) {
	sc := scenario{n: 20, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 8, concurrency: 4, streaming: true, cancelEvery: 5}
	s, _ := analyseDir(t, Options{}, sc.build(t, t.TempDir()))
	if s.Counts.Errors != 4 || s.Counts.GateErrors != 0 {
		t.Fatalf("counts %+v; want 4 cancellations, none counted by the gate", s.Counts)
	}
	if !CheckErrorRate(s, 0).OK {
		t.Fatal("planned cancellations failed the error-rate gate")
	}
}

// splitShards turns a run directory with several workers into one run directory per worker,
// as replay would produce on several hosts from shards of one plan.
func splitShards(t *testing.T, runDir, dst string) []string {
	t.Helper()
	m, err := rawlog.ReadManifest(runDir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join(runDir, "plan.plan"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i, w := range m.Workers {
		d := filepath.Join(dst, fmt.Sprintf("shard-%d", i))
		if err := mkdir(d); err != nil {
			t.Fatal(err)
		}
		log, err := os.ReadFile(filepath.Join(runDir, w.Log))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, w.Log), log, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "plan.plan"), plan, 0o644); err != nil {
			t.Fatal(err)
		}
		sm := *m
		sm.Workers = []rawlog.WorkerInfo{w}
		sm.TelemetryLog = ""
		if err := rawlog.WriteManifest(d, &sm); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// Shards of one plan analysed together give the same metrics as one run with all workers.
func TestMergeShards(t *testing.T) {
	sc := scenario{n: 30, warmup: 2, workers: 3, ttft: 20 * ms, itl: 5 * ms, tokens: 10, rate: 40, streaming: true, errEvery: 7, cpuPct: 30}
	tmp := t.TempDir()
	whole := sc.build(t, tmp)
	shards := splitShards(t, whole, tmp)
	s1, r1 := analyseDir(t, Options{}, whole)
	s2, r2 := analyseDir(t, Options{}, shards...)
	if !reflect.DeepEqual(s1.Results, s2.Results) {
		for i := range s1.Results {
			if i < len(s2.Results) && !reflect.DeepEqual(s1.Results[i], s2.Results[i]) {
				t.Errorf("%s: %+v vs %+v", s1.Results[i].Tag, s1.Results[i].Stats, s2.Results[i].Stats)
			}
		}
		t.Fatalf("merged shards differ from the whole run")
	}
	if !reflect.DeepEqual(s1.Counts, s2.Counts) || !reflect.DeepEqual(s1.Errors, s2.Errors) {
		t.Fatalf("counts %+v / %+v, errors %+v / %+v", s1.Counts, s2.Counts, s1.Errors, s2.Errors)
	}
	if !bytes.Equal(r1, r2) {
		t.Fatal("records differ")
	}
	// A shard given twice is an input error, not a double count.
	if _, err := Analyze(Options{RunDirs: []string{shards[0], shards[0]}, Tokenizer: wordCounter{}}, nil); !errors.Is(err, ErrInput) {
		t.Fatalf("same shard twice: %v", err)
	}
}

// A worker that died leaves a torn log and planned requests with no record: they are lost,
// counted as errors, listed in the records, and the torn frame is reported.
func TestLostAndTorn(t *testing.T) {
	sc := scenario{n: 12, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 6, concurrency: 4, streaming: true}
	dir := sc.build(t, t.TempDir())
	log := filepath.Join(dir, "worker-001.rawlog")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the footer and cut the last request record in half.
	ends := recordEnds(t, b)
	cut := ends[len(ends)-3] + (ends[len(ends)-2]-ends[len(ends)-3])/2
	if err := os.WriteFile(log, b[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	s, records := analyseDir(t, Options{}, dir)
	if s.Counts.Lost != 1 || s.Counts.Valid != 11 || s.Counts.Errors != 1 {
		t.Fatalf("counts %+v; want 1 lost, 11 valid", s.Counts)
	}
	if len(s.Errors) != 1 || s.Errors[0].Kind != "lost" {
		t.Fatalf("errors %+v", s.Errors)
	}
	if CheckErrorRate(s, 0).OK {
		t.Fatal("a lost request passed the error-rate gate")
	}
	if !bytes.Contains(records, []byte(`"outcome":"lost"`)) {
		t.Fatal("no record for the lost request")
	}
	notes := strings.Join(s.Notes, "\n")
	if !strings.Contains(notes, "torn final record") || !strings.Contains(notes, "has no footer") {
		t.Fatalf("notes %q", notes)
	}
}

// recordEnds returns the end offset of every frame of a raw log.
func recordEnds(t *testing.T, b []byte) []int64 {
	t.Helper()
	var ends []int64
	off := 16
	for off+8 <= len(b) {
		n := int(uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24)
		off += 8 + n
		ends = append(ends, int64(off))
	}
	return ends
}

// A worker killed before writing its log: its requests are lost, the rest is analysed.
func TestMissingLog(t *testing.T) {
	sc := scenario{n: 10, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 4, streaming: true}
	dir := sc.build(t, t.TempDir())
	if err := os.Remove(filepath.Join(dir, "worker-001.rawlog")); err != nil {
		t.Fatal(err)
	}
	s, records := analyseDir(t, Options{}, dir)
	if s.Counts.Lost != 5 || s.Counts.Valid != 5 {
		t.Fatalf("counts %+v; want 5 lost, 5 valid", s.Counts)
	}
	if bytes.Count(records, []byte(`"outcome":"lost"`)) != 5 || !strings.Contains(strings.Join(s.Notes, " "), "missing or empty") {
		t.Fatalf("notes %q", s.Notes)
	}
}

// Requests left unsent because the plan's duration elapsed are not part of the benchmark; those
// left unsent by an interruption are failures.
func TestNotDueAndNotSent(t *testing.T) {
	sc := scenario{n: 10, workers: 1, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true}
	dir := sc.build(t, t.TempDir())
	m, _ := rawlog.ReadManifest(dir)
	log := filepath.Join(dir, m.Workers[0].Log)
	r, err := rawlog.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*rawlog.Request
	for {
		k, err := r.Next()
		if err != nil {
			break
		}
		if k == rawlog.KindRequest {
			q := *r.Request()
			q.Body, q.ReadNs, q.ReadEnd = bytes.Clone(q.Body), slices.Clone(q.ReadNs), slices.Clone(q.ReadEnd)
			reqs = append(reqs, &q)
		}
	}
	r.Close()
	for i, q := range reqs[7:] {
		*q = rawlog.Request{Index: q.Index, Outcome: rawlog.OutcomeNotSent, IntendedNs: q.IntendedNs, ReadyNs: -1, WriteStartNs: -1,
			WriteEndNs: -1, HeaderNs: -1, EndNs: -1, ConnectStartNs: -1, ConnectEndNs: -1, Err: "benchmark duration elapsed"}
		if i == 0 {
			q.Err = "run interrupted"
		}
	}
	writeRun(t, dir, runSpec{start: 1_767_225_600_000_000_000, planFile: "plan.plan", planHash: m.PlanHash, workers: []workerLog{{reqs: reqs}}})
	s, records := analyseDir(t, Options{}, dir)
	if s.Counts.NotDue != 2 || s.Counts.Profile != 8 || s.Counts.Errors != 1 || s.Counts.NotSent != 1 || s.Counts.Valid != 7 {
		t.Fatalf("counts %+v; want 2 not due, 1 not sent of 8", s.Counts)
	}
	if n := bytes.Count(records, []byte("\n")); n != 8 {
		t.Fatalf("%d records; want 8", n)
	}
}

func TestBadInput(t *testing.T) {
	tmp := t.TempDir()
	good := scenario{n: 4, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true}.build(t, filepath.Join(tmp, "a"))
	other := scenario{n: 5, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true}.build(t, filepath.Join(tmp, "b"))
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"no run dir", Options{}, "no run directory"},
		{"missing run.json", Options{RunDirs: []string{tmp}}, "run.json"},
		{"other plan", Options{RunDirs: []string{good}, PlanPath: filepath.Join(other, "plan.plan")}, "--plan"},
		{"different plans", Options{RunDirs: []string{good, other}}, "only shards of one plan"},
		{"missing plan", Options{RunDirs: []string{good}, PlanPath: filepath.Join(tmp, "nope.plan")}, "nope.plan"},
		{"no tokenizer", Options{RunDirs: []string{good}, Tokenizer: nil, LoadTokenizer: func(string) (TokenCounter, error) {
			return nil, errors.New("not found")
		}}, "--use-server-token-count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.opts.Tokenizer == nil && c.opts.LoadTokenizer == nil {
				c.opts.Tokenizer = wordCounter{}
			}
			_, err := Analyze(c.opts, nil)
			if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want an input error mentioning %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
		})
	}
}

func TestCatalogDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range Metrics() {
		if seen[d.Tag] {
			t.Errorf("tag %s defined twice", d.Tag)
		}
		seen[d.Tag] = true
		if !bytes.Contains(doc, []byte("`"+d.Tag+"`")) {
			t.Errorf("docs/metrics.md does not document `%s`", d.Tag)
		}
	}
}

// A non-token endpoint (rankings): latency, request throughput and item throughput are
// reported, the token metrics are omitted rather than zero, and a response in another API's
// shape is an invalid_response naming the endpoint.
func TestNonTokenEndpointItems(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := mkdir(dir); err != nil {
		t.Fatal(err)
	}
	const n = 6
	ps := planSpec{meta: mmapds.Meta{Endpoint: "nim_rankings", Paths: []string{"/v1/ranking"}, Model: "mock", Concurrency: 1,
		ProfileCount: n, Tokenizer: "words"}}
	var reqs []*rawlog.Request
	send := int64(0)
	for i := 0; i < n; i++ {
		ps.recs = append(ps.recs, mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile})
		body := `{"rankings":[{"index":0,"logit":1.5},{"index":2,"logit":0.5},{"index":1,"logit":-2}],"usage":{"prompt_tokens":12,"total_tokens":12}}`
		if i == n-1 {
			body = `{"object":"list","data":[{"index":0,"embedding":[0.5]}]}` // an embeddings body: wrong route
		}
		reqs = append(reqs, request(i, send, read{send + 20*ms, body}))
		send += 25 * ms
	}
	hash := writePlan(t, filepath.Join(dir, "plan.plan"), ps)
	writeRun(t, dir, runSpec{start: 1_767_225_600_000_000_000, planFile: "plan.plan", planHash: hash, workers: []workerLog{{reqs: reqs}}})
	s, _ := analyseDir(t, Options{}, dir)
	for _, tag := range []string{"time_to_first_token", "inter_token_latency", "output_sequence_length", "input_sequence_length",
		"output_token_throughput", "total_token_throughput", "total_osl", "total_isl", "output_token_count"} {
		if r, ok := s.Result(tag); ok {
			t.Errorf("%s reported (%+v): token metrics must be omitted for a non-token endpoint", tag, r)
		}
	}
	items, ok := s.Result("item_count")
	if !ok || items.Stats.Min != 3 || items.Stats.Max != 3 || items.Stats.Count != n-1 {
		t.Fatalf("item_count %+v (present %v); want 3 per valid request", items.Stats, ok)
	}
	dur, _ := s.Result("benchmark_duration")
	ips, ok := s.Result("item_throughput")
	if want := 3 * (n - 1) / dur.Value; !ok || math.Abs(ips.Value-want) > 1e-9*want || ips.Unit != "items/sec" {
		t.Fatalf("item_throughput %+v (present %v); want %v items/sec", ips, ok, want)
	}
	if rps, _ := s.Result("request_throughput"); math.Abs(rps.Value-(n-1)/dur.Value) > 1e-9 {
		t.Fatalf("request_throughput %v", rps.Value)
	}
	if len(s.Errors) != 1 || s.Errors[0].Kind != "invalid_response" || !strings.Contains(s.Errors[0].Message, "endpoint nim_rankings: ") {
		t.Fatalf("errors %+v; want one invalid_response naming nim_rankings", s.Errors)
	}
}
