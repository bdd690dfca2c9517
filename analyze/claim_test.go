package analyze

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/stats"
)

func mustGate(t *testing.T, expr string) Gate {
	t.Helper()
	g, err := ParseGate(expr)
	if err != nil {
		// server.* and gpu.* gates come with the server metrics: stand one in by its expression.
		return Gate{Expr: expr, Metric: MetricDef{Tag: strings.SplitN(expr, ".", 2)[0]}}
	}
	return g
}

func passedValidation() *GeneratorValidation {
	return &GeneratorValidation{FormatVersion: GeneratorValidationVersion, PlanHash: "ab", Machine: Machine{Host: "h", CPUModel: "c"},
		Workers: 2, WorkerCPUs: []int{0, 1}, Passed: true, Figures: map[string]float64{FigTTFTP99Error: 1.5}}
}

var thisRun = RunIdentity{PlanHash: "ab", Machine: Machine{Host: "h", CPUModel: "c"}, WorkerCPUs: []int{0, 1}}

// TestClaimGenerator covers each branch of the claim's generator part.
func TestClaimGenerator(t *testing.T) {
	kept := Verdict{Known: true, Kept: true, LagKnown: true, DispatchLagP99Ms: 0.2}
	failedV := func() *GeneratorValidation {
		g := passedValidation()
		g.Passed, g.Reasons = false, []string{"schedule lag p99 3.00 ms exceeds 1.00 ms"}
		return g
	}
	other := passedValidation()
	other.PlanHash = "cd"
	otherWorkers := passedValidation()
	otherWorkers.WorkerCPUs = []int{0}
	otherWorkers.Workers = 1
	withShare := passedValidation()
	withShare.Figures[FigClientTTFTP99], withShare.Figures[FigReceiveP99] = 0.25, 0.125
	cases := []struct {
		name    string
		verdict Verdict
		g       *GeneratorValidation
		status  string
		want    string
	}{
		{"validated", kept, passedValidation(), StatusValidated, "errors within tolerance (TTFT p99 1.50 ms, inter-chunk p99 0.00 ms), and this run kept its schedule"},
		{"validated on the client's share", kept, withShare, StatusValidated,
			"the client's own share within tolerance (TTFT p99 0.25 ms, receive delay p99 0.12 ms; measured − configured, with the mock server's lateness, TTFT p99 1.50 ms), and this run kept"},
		{"no validation", kept, nil, StatusNotValidated, "no generator validation"},
		{"validation failed", kept, failedV(), StatusFailed, "schedule lag p99 3.00 ms exceeds"},
		{"other plan", kept, other, StatusNotValidated, "does not stand for this run: it validated plan"},
		{"other workers", kept, otherWorkers, StatusNotValidated, "it ran 1 workers"},
		{"run bent its schedule", Verdict{Known: true, Reasons: []string{"dispatch lag p99 5 ms > 1 ms"}}, passedValidation(), StatusFailed, "did not keep its schedule"},
		{"run unjudged", Verdict{}, passedValidation(), StatusNotValidated, "could not be judged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Summary{Verdict: c.verdict}
			p := EvaluateClaim(s, ClaimOptions{Generator: c.g, GeneratorFile: "gv.json", Run: thisRun}).Generator
			if p.Status != c.status || p.Validated != (c.status == StatusValidated) || !strings.Contains(p.Evidence, c.want) {
				t.Errorf("got %s (validated %v): %s; want %s containing %q", p.Status, p.Validated, p.Evidence, c.status, c.want)
			}
			if c.g != nil && c.g.Mismatch(thisRun) == "" && p.Figures[FigTTFTP99Error] != 1.5 {
				t.Errorf("figures lack the validation's: %v", p.Figures)
			}
		})
	}
}

// TestClaimShape covers each branch of the claim's shape part.
func TestClaimShape(t *testing.T) {
	same := stats.KSResult{D: 0.02, P: 0.99, N: 50, M: 50}
	far := stats.KSResult{D: 0.8, P: 1e-9, N: 50, M: 50}
	significantButSmall := stats.KSResult{D: 0.03, P: 0.001, N: 100000, M: 100000}
	with := func(isl stats.KSResult, reuse, ref float64) *ShapeReport {
		return &ShapeReport{Reference: "ref.jsonl", Compares: []ShapeCompare{{Name: "isl", KS: isl}, {Name: "osl", KS: same},
			{Name: "inter_arrival", Skipped: "the reference has no timestamps"}}, Fidelity: ShapeCompare{Name: "plan_inter_arrival", KS: same},
			Reuse: reuse, RefReuse: ref}
	}
	bent := with(same, 0.5, 0.5)
	bent.Fidelity.KS = far
	cases := []struct {
		name   string
		r      *ShapeReport
		status string
		want   string
	}{
		{"not computed", nil, StatusNotValidated, "not compared with a reference"},
		{"no reference", &ShapeReport{Fidelity: ShapeCompare{Name: "plan_inter_arrival", KS: same}, Reuse: -1, RefReuse: -1}, StatusNotValidated, "no reference given"},
		{"passes", with(same, 0.45, 0.47), StatusValidated, "matches ref.jsonl"},
		{"large samples, immaterial difference", with(significantButSmall, 0.45, 0.47), StatusValidated, "matches"},
		{"isl differs", with(far, 0.45, 0.47), StatusFailed, "isl distribution differs"},
		{"reuse differs", with(same, 0.45, 0.2), StatusFailed, "prefix reuse 0.450 vs the reference's 0.200"},
		{"client bent the arrivals", bent, StatusFailed, "the client bent the arrival process"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := EvaluateClaim(&Summary{}, ClaimOptions{Shape: c.r}).Shape
			if p.Status != c.status || !strings.Contains(p.Evidence, c.want) {
				t.Errorf("got %s: %s; want %s containing %q", p.Status, p.Evidence, c.status, c.want)
			}
		})
	}
}

// TestClaimThresholds covers each branch of the claim's thresholds part.
func TestClaimThresholds(t *testing.T) {
	agreed := func(exprs ...string) *GatesFile {
		f := &GatesFile{Version: 1, Path: "gates.yaml"}
		for _, e := range exprs {
			f.Gates = append(f.Gates, AgreedGate{Gate: e, Owner: "o", Reason: "r"})
		}
		return f
	}
	ttft, kv, gpu := "time_to_first_token.p99<400", "server.kv_cache_usage.max<0.9", "gpu.utilization.avg>50"
	rate := "request_throughput>1"
	cases := []struct {
		name   string
		gates  []string
		file   *GatesFile
		status string
		want   string
	}{
		{"no gates", nil, nil, StatusNotValidated, "thresholds not validated: no gates"},
		{"latency without context", []string{ttft}, agreed(ttft), StatusNotValidated, "thresholds not validated: TTFT gate has no KV-cache/GPU context"},
		{"latency with KV context, unagreed", []string{ttft, kv}, nil, StatusNotValidated, "the gates are not agreed"},
		{"one gate not in the file", []string{ttft, kv}, agreed(ttft), StatusNotValidated, kv + " is not in gates.yaml"},
		{"agreed with KV context", []string{ttft, kv}, agreed(ttft, kv), StatusValidated, "2 gates agreed in gates.yaml, latency gates paired with 1 capacity gates"},
		{"agreed with GPU context", []string{ttft, gpu}, agreed(gpu, ttft), StatusValidated, "2 gates agreed"},
		{"agreed, no latency gate", []string{rate}, agreed(rate), StatusValidated, "1 gates agreed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var gates []Gate
			for _, e := range c.gates {
				gates = append(gates, mustGate(t, e))
			}
			p := EvaluateClaim(&Summary{}, ClaimOptions{Gates: gates, Agreed: c.file}).Thresholds
			if p.Status != c.status || !strings.Contains(p.Evidence, c.want) {
				t.Errorf("got %s: %s; want %s containing %q", p.Status, p.Evidence, c.status, c.want)
			}
		})
	}
}

// TestClaimTrustworthy: trustworthy = generator ∧ shape ∧ thresholds, in every export.
func TestClaimTrustworthy(t *testing.T) {
	ttft, kv := "time_to_first_token.p99<400", "server.kv_cache_usage.max<0.9"
	file := &GatesFile{Version: 1, Path: "g.yaml", Gates: []AgreedGate{{Gate: ttft, Owner: "o", Reason: "r"}, {Gate: kv, Owner: "o", Reason: "r"}}}
	shape := &ShapeReport{Reference: "ref", Fidelity: ShapeCompare{Name: "plan_inter_arrival", Skipped: "closed loop"}, Reuse: -1, RefReuse: -1}
	all := ClaimOptions{Generator: passedValidation(), Run: thisRun, Shape: shape, Gates: []Gate{mustGate(t, ttft), mustGate(t, kv)}, Agreed: file}
	for _, c := range []struct {
		name string
		drop func(o *ClaimOptions)
		want bool
	}{
		{"all three", func(*ClaimOptions) {}, true},
		{"no generator", func(o *ClaimOptions) { o.Generator = nil }, false},
		{"no shape", func(o *ClaimOptions) { o.Shape = nil }, false},
		{"no agreed gates", func(o *ClaimOptions) { o.Agreed = nil }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := all
			c.drop(&o)
			s := &Summary{Verdict: Verdict{Known: true, Kept: true}, Counts: Counts{Profile: 1, Valid: 1}}
			if got := EvaluateClaim(s, o).Trustworthy; got != c.want {
				t.Fatalf("trustworthy %v, want %v: %+v", got, c.want, s.Claim)
			}
			var js, csv, con bytes.Buffer
			if err := WriteAIPerfJSON(&js, s); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				LLMBench struct {
					Claim struct {
						Generator struct {
							Validated bool   `json:"validated"`
							Status    string `json:"status"`
							Evidence  string `json:"evidence"`
						} `json:"generator"`
						Trustworthy bool `json:"trustworthy"`
					} `json:"benchmark_claim"`
				} `json:"llmbench"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.LLMBench.Claim.Trustworthy != c.want || doc.LLMBench.Claim.Generator.Status != s.Claim.Generator.Status {
				t.Errorf("JSON benchmark_claim %+v, want trustworthy %v", doc.LLMBench.Claim, c.want)
			}
			if err := WriteAIPerfCSV(&csv, s); err != nil {
				t.Fatal(err)
			}
			wantCSV := "trustworthy,,false,"
			if c.want {
				wantCSV = "trustworthy,,true,"
			}
			if !strings.Contains(csv.String(), "Claim,Status,Validated,Evidence") || !strings.Contains(csv.String(), wantCSV) {
				t.Errorf("CSV lacks the claim:\n%s", csv.String())
			}
			if err := WriteConsole(&con, s); err != nil {
				t.Fatal(err)
			}
			wantCon := "Benchmark claim: trustworthy: yes"
			if !strings.Contains(con.String(), "Benchmark claim: trustworthy: ") || strings.Contains(con.String(), wantCon) != c.want {
				t.Errorf("console lacks the claim:\n%s", con.String())
			}
		})
	}
}

// TestJudgeGenerator: errors are measured − configured at p50 and p99, judged against the
// tolerances, with the schedule lag and the busiest worker; with the client's share from the
// mock server's log, the share is judged and a measured − configured error beyond tolerance
// is the mock's, noted, unless the share does not stand for the run.
func TestJudgeGenerator(t *testing.T) {
	st := func(p50, p99 float64) *Stats {
		s := &Stats{Count: 10}
		s.P[4], s.P[8] = p50, p99
		return s
	}
	summary := func(ttft99, lag99, cpu float64, failed int64) *Summary {
		return &Summary{Counts: Counts{Valid: 10, Errors: failed}, Workers: []WorkerSummary{{Worker: 0, CPUPct: cpu}, {Worker: 1, CPUPct: -1}},
			Results: []Result{{MetricDef: catalog[MTimeToFirstToken], Stats: st(20.3, ttft99)}, {MetricDef: catalog[MInterTokenLatency], Stats: st(5, 5.2)},
				{MetricDef: catalog[MInterChunkLatency], Stats: st(5, 6)}, {MetricDef: catalog[MDispatchLag], Stats: st(0.1, lag99)}}}
	}
	repeat := func(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }
	share := func(ttft, receive float64, matched int) *ClientShare {
		return &ClientShare{Matched: matched, TTFT: repeat(ttft, matched), Receive: repeat(receive, 5*matched),
			ServerTTFT: repeat(44, matched), ReadDelay: repeat(0.5, matched), MinDelay: min(ttft, receive)}
	}
	mock, tol := MockTiming{TTFTMs: 20, ITLMs: 5}, DefaultTolerances()
	cases := []struct {
		name    string
		s       *Summary
		share   *ClientShare
		passed  bool
		want    string // in the reasons
		note    string // in the notes
		figures map[string]float64
	}{
		{"passes", summary(25, 0.5, 10, 0), nil, true, "", "",
			map[string]float64{FigTTFTP50Error: 0.3, FigTTFTP99Error: 5, FigICLP99Error: 1, FigWorkerCPU: 10}},
		{"ttft p99", summary(45, 0.5, 10, 0), nil, false, "TTFT p99 error 25.00 ms exceeds ±10.00 ms", "measured − configured alone", nil},
		{"lag", summary(25, 3, 10, 0), nil, false, "schedule lag p99 3.00 ms exceeds 1.00 ms", "", nil},
		{"cpu", summary(25, 0.5, 95, 0), nil, false, "a worker used 95.00% of a core", "", nil},
		{"failures", summary(25, 0.5, 10, 2), nil, false, "2 requests failed", "", nil},
		{"cpu shared", &Summary{Counts: Counts{Valid: 10}, Workers: []WorkerSummary{{Worker: 0, CPU: 1, CPUPct: 50}, {Worker: 1, CPU: 1, CPUPct: 45}, {Worker: 2, CPU: 0, CPUPct: 60}},
			Results: summary(25, 0.5, 10, 0).Results}, nil, false, "2 workers sharing a CPU used 95.00% of a core", "", map[string]float64{FigWorkerCPU: 95}},
		{"nothing", &Summary{}, nil, false, "no request completed", "", nil},
		{"mock late, client fine", summary(45, 0.5, 10, 0), share(0.2, 0.05, 10), true, "",
			"TTFT p99 error 25.00 ms exceeds ±10.00 ms; the client's own share stayed within tolerance (TTFT p99 0.20 ms), so the rest is the mock server's: it read requests p99 0.50 ms after",
			map[string]float64{FigClientTTFTP99: 0.2, FigReceiveP99: 0.05, FigMatched: 10, FigMockTTFTP99Error: 24, FigMockReadP99: 0.5, FigTTFTP99Error: 25}},
		{"client slow to read", summary(25, 0.5, 10, 0), share(3, 7, 10), false,
			"the client's share of TTFT p50 3.00 ms exceeds ±2.00 ms; receive delay p50 7.00 ms exceeds ±1.00 ms; receive delay p99 7.00 ms exceeds ±5.00 ms", "", nil},
		{"share of too few requests", summary(45, 0.5, 10, 0), share(0.2, 0.05, 5), false, "TTFT p99 error 25.00 ms",
			"only 5 of 10 requests matched the mock server's log", nil},
		{"clocks disagree", summary(45, 0.5, 10, 0), share(-2, 0.05, 10), false, "TTFT p99 error 25.00 ms",
			"the client read an event 2.00 ms before the mock server wrote it", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			figs, passed, reasons, notes := JudgeGenerator(c.s, mock, tol, c.share)
			if passed != c.passed || (c.want != "" && !strings.Contains(strings.Join(reasons, "; "), c.want)) || (c.want == "" && len(reasons) > 0) {
				t.Errorf("passed %v reasons %q; want %v with %q", passed, reasons, c.passed, c.want)
			}
			if c.note != "" && !strings.Contains(strings.Join(notes, "; "), c.note) {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
			for k, v := range c.figures {
				if figs[k] != v {
					t.Errorf("figure %s = %v, want %v (all: %v)", k, figs[k], v, figs)
				}
			}
		})
	}
}

// TestClientShareOf: requests meet the server's records by session and arrival order; the
// client's share is the write plus the receive delays, on the mapping the offset corrects;
// a record with another event count, or none, leaves the request unmatched.
func TestClientShareOf(t *testing.T) {
	const start, offset = int64(1_000_000_000_000), int64(3_000) // Unix ns of the run's zero; the server's clock drift
	ms := func(v float64) int64 { return int64(v * 1e6) }
	unix := func(runMs float64) int64 { return start + ms(runMs) - offset } // a run instant as the server logged it
	var c ShareCollector
	// Session 7, two turns; session 8 one turn; session 9 with a record of another length;
	// session 10 without a record; session 11 not valid (no content).
	c.Add(ContentTiming{Index: 2, Session: 7, Turn: 1, WriteStartNs: ms(100), WriteEndNs: ms(100.1), ContentNs: []int64{ms(130.4), ms(135.2)}})
	c.Add(ContentTiming{Index: 1, Session: 7, Turn: 0, WriteStartNs: ms(10), WriteEndNs: ms(10.2), ContentNs: []int64{ms(31), ms(36.5), ms(41)}})
	c.Add(ContentTiming{Index: 3, Session: 8, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26)}})
	c.Add(ContentTiming{Index: 4, Session: 9, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26), ms(30)}})
	c.Add(ContentTiming{Index: 5, Session: 10, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26)}})
	c.Add(ContentTiming{Index: 6, Session: 11, WriteStartNs: ms(5), WriteEndNs: ms(5.1)})
	server := []ServerEvents{
		{Correlation: "7", ArrivalUnixNs: unix(100.5), SentUnixNs: []int64{unix(130), unix(135)}},
		{Correlation: "7", ArrivalUnixNs: unix(11), SentUnixNs: []int64{unix(30.5), unix(36), unix(40.9)}},
		{Correlation: "8", ArrivalUnixNs: unix(6), SentUnixNs: []int64{unix(25.9)}},
		{Correlation: "9", ArrivalUnixNs: unix(6), SentUnixNs: []int64{unix(25.9)}},
		{Correlation: "x", ArrivalUnixNs: unix(6), SentUnixNs: []int64{unix(25.9)}},
		{Correlation: "11", ArrivalUnixNs: unix(6), SentUnixNs: []int64{unix(25.9)}},
	}
	s := c.ClientShareOf(server, start, offset)
	round := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = math.Round(x*1e6) / 1e6
		}
		return out
	}
	if s.Matched != 3 || s.Unmatched != 2 {
		t.Fatalf("matched %d unmatched %d, want 3 and 2", s.Matched, s.Unmatched)
	}
	if got, want := round(s.TTFT), []float64{0.2 + 0.5, 0.1 + 0.4, 0.1 + 0.1}; !slices.Equal(got, want) {
		t.Errorf("TTFT shares %v, want %v", got, want)
	}
	if got, want := round(s.Receive), []float64{0.5, 0.1, 0.2}; !slices.Equal(got, want) {
		t.Errorf("receive delays %v, want %v", got, want)
	}
	if got, want := round(s.ServerTTFT), []float64{19.5, 29.5, 19.9}; !slices.Equal(got, want) {
		t.Errorf("server TTFTs %v, want %v", got, want)
	}
	if got, want := round(s.ReadDelay), []float64{0.8, 0.4, 0.9}; !slices.Equal(got, want) {
		t.Errorf("read delays %v, want %v", got, want)
	}
	if math.Round(s.MinDelay*1e6)/1e6 != 0.1 {
		t.Errorf("min delay %v, want 0.1", s.MinDelay)
	}
	// Without the offset the server's instants sit 3 µs early: every delay 3 µs longer.
	if s0 := c.ClientShareOf(server, start, 0); math.Abs(s0.MinDelay-(0.1+0.003)) > 1e-9 {
		t.Errorf("without the offset: min delay %v, want 0.103", s0.MinDelay)
	}
}

// TestGeneratorValidationFile: the file round-trips, and unknown versions and fields are refused.
func TestGeneratorValidationFile(t *testing.T) {
	path := t.TempDir() + "/" + GeneratorValidationName
	if err := WriteGeneratorValidation(path, passedValidation()); err != nil {
		t.Fatal(err)
	}
	g, err := ReadGeneratorValidation(path)
	if err != nil || g.Mismatch(thisRun) != "" || !g.Passed {
		t.Fatalf("round trip: %v %+v", err, g)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"format_version":2,"plan_hash":"ab"}`, "format version 2 is not supported"},
		{`{"plan_hash":"ab"}`, "no format_version"},
		{`{"format_version":1,"plan_hash":"ab","extra":1}`, `unknown field "extra"`},
		{`{"format_version":1}`, "no plan_hash"},
	} {
		if _, err := ParseGeneratorValidation([]byte(c.doc), "f.json"); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.json") {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
}

// TestClaimConsoleLines: the claim in five compact lines (conclusion, generator, schedule,
// shape, thresholds); a part that was not validated is said in words, never marked failed
// and never coloured; a failed check is marked, its evidence whole, and red only when the
// console asks for colour.
func TestClaimConsoleLines(t *testing.T) {
	failedGen := passedValidation()
	failedGen.Passed, failedGen.Reasons = false, []string{"TTFT p99 error 9 ms > 2 ms"}
	kept := Verdict{Known: true, Kept: true, LagKnown: true, DispatchLagP99Ms: 0.3, MaxLagMs: 1}
	late := Verdict{Known: true, Reasons: []string{"dispatch lag p99 3 ms > 1 ms"}, LagKnown: true, DispatchLagP99Ms: 3, MaxLagMs: 1}
	cases := []struct {
		name    string
		v       Verdict
		o       ClaimOptions
		head    string
		failed  []string // the parts marked failed
		present []string
	}{
		{"nothing validated", kept, ClaimOptions{}, "Benchmark claim: trustworthy: not shown (generator, shape, thresholds not validated", nil,
			[]string{"  generator   not validated: no generator validation", "  schedule    kept: dispatch lag p99 0.30 ms (bound 1.00 ms)", "  thresholds  not validated: no gates"}},
		{"generator failed", kept, ClaimOptions{Generator: failedGen, Run: thisRun}, "Benchmark claim: trustworthy: NO (generator failed)", []string{"generator"},
			[]string{"  generator   FAILED: the generator validation  failed: TTFT p99 error 9 ms > 2 ms"}},
		{"schedule not kept", late, ClaimOptions{Generator: passedValidation(), Run: thisRun}, "Benchmark claim: trustworthy: NO (generator, schedule failed)", []string{"generator", "schedule"},
			[]string{"  generator   FAILED: this run did not keep its schedule (see schedule)", "  schedule    FAILED: not kept: dispatch lag p99 3 ms > 1 ms; these numbers describe the client"}},
		{"not judged", Verdict{}, ClaimOptions{}, "Benchmark claim: trustworthy: not shown (generator, schedule, shape, thresholds not validated", nil,
			[]string{"  schedule    not judged: no request was sent"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Summary{Verdict: c.v, Counts: Counts{Profile: 1, Valid: 1}}
			EvaluateClaim(s, c.o)
			lines := ClaimConsoleLines(s.Claim)
			if len(lines) != 5 || !strings.HasPrefix(lines[0].Text, c.head) {
				t.Fatalf("got %d lines, head %q; want 5, head %q", len(lines), lines[0].Text, c.head)
			}
			var failed []string
			for _, l := range lines[1:] {
				if l.Failed {
					failed = append(failed, strings.Fields(l.Text)[0])
				}
				if l.Failed != strings.Contains(l.Text, "FAILED") {
					t.Errorf("line %q: marked failed %v", l.Text, l.Failed)
				}
			}
			if strings.Join(failed, ",") != strings.Join(c.failed, ",") || lines[0].Failed != (len(c.failed) > 0) {
				t.Errorf("failed parts %v (head %v), want %v", failed, lines[0].Failed, c.failed)
			}
			text := strings.Join(ClaimLines(s.Claim), "\n")
			for _, p := range c.present {
				if !strings.Contains(text, p) {
					t.Errorf("no %q in:\n%s", p, text)
				}
			}
			for _, color := range []bool{false, true} {
				var con bytes.Buffer
				if err := WriteConsoleColor(&con, s, color); err != nil {
					t.Fatal(err)
				}
				if red := strings.Count(con.String(), ansiRed); red != map[bool]int{false: 0, true: len(c.failed) + min(len(c.failed), 1)}[color] {
					t.Errorf("color %v: %d red lines for %d failed parts:\n%s", color, red, len(c.failed), con.String())
				}
			}
		})
	}
}
