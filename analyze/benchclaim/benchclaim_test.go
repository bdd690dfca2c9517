package benchclaim

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/stats"
)

func passedValidation() *GeneratorValidation {
	return &GeneratorValidation{FormatVersion: GeneratorValidationVersion, PlanHash: "ab", Machine: Machine{Host: "h", CPUModel: "c"},
		Workers: 2, WorkerCPUs: []int{0, 1}, Passed: true, Figures: map[string]float64{FigTTFTP99Error: 1.5}}
}

var thisRun = RunIdentity{PlanHash: "ab", Machine: Machine{Host: "h", CPUModel: "c"}, WorkerCPUs: []int{0, 1}}

// builtinDef is the built-in metric id's definition.
func builtinDef(id analyze.MetricID) analyze.MetricDef {
	for _, d := range analyze.Metrics() {
		if d.ID == id {
			return d
		}
	}
	panic("no built-in metric")
}

// ansiRed is the colour analyze/output writes a failed claim line in.
const ansiRed = "\x1b[31m"

// TestClaimGenerator covers each branch of the claim's generator part.
func TestClaimGenerator(t *testing.T) {
	kept := analyze.Verdict{Known: true, Kept: true, LagKnown: true, DispatchLagP99Ms: 0.2}
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
		verdict analyze.Verdict
		g       *GeneratorValidation
		status  string
		want    string
	}{
		{"validated", kept, passedValidation(), analyze.StatusValidated, "errors within tolerance (TTFT p99 1.50 ms, inter-chunk p99 0.00 ms), and this run kept its schedule"},
		{"validated on the client's share", kept, withShare, analyze.StatusValidated,
			"the client's own share within tolerance (TTFT p99 0.25 ms, receive delay p99 0.12 ms; measured − configured, with the mock server's lateness, TTFT p99 1.50 ms), and this run kept"},
		{"no validation", kept, nil, analyze.StatusNotValidated, "no generator validation"},
		{"validation failed", kept, failedV(), analyze.StatusFailed, "schedule lag p99 3.00 ms exceeds"},
		{"other plan", kept, other, analyze.StatusNotValidated, "does not stand for this run: it validated plan"},
		{"other workers", kept, otherWorkers, analyze.StatusNotValidated, "it ran 1 workers"},
		{"run bent its schedule", analyze.Verdict{Known: true, Reasons: []string{"dispatch lag p99 5 ms > 1 ms"}}, passedValidation(), analyze.StatusFailed, "did not keep its schedule"},
		{"run unjudged", analyze.Verdict{}, passedValidation(), analyze.StatusNotValidated, "could not be judged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &analyze.Summary{Verdict: c.verdict}
			p := GeneratorClaim(s, c.g, "gv.json", thisRun)
			if p.Status != c.status || p.Validated != (c.status == analyze.StatusValidated) || !strings.Contains(p.Evidence, c.want) {
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
		{"not computed", nil, analyze.StatusNotValidated, "not compared with a reference"},
		{"no reference", &ShapeReport{Fidelity: ShapeCompare{Name: "plan_inter_arrival", KS: same}, Reuse: -1, RefReuse: -1}, analyze.StatusNotValidated, "no reference given"},
		{"passes", with(same, 0.45, 0.47), analyze.StatusValidated, "matches ref.jsonl"},
		{"large samples, immaterial difference", with(significantButSmall, 0.45, 0.47), analyze.StatusValidated, "matches"},
		{"isl differs", with(far, 0.45, 0.47), analyze.StatusFailed, "isl distribution differs"},
		{"reuse differs", with(same, 0.45, 0.2), analyze.StatusFailed, "prefix reuse 0.450 vs the reference's 0.200"},
		{"client bent the arrivals", bent, analyze.StatusFailed, "the client bent the arrival process"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ShapeClaim(c.r)
			if p.Status != c.status || !strings.Contains(p.Evidence, c.want) {
				t.Errorf("got %s: %s; want %s containing %q", p.Status, p.Evidence, c.status, c.want)
			}
		})
	}
}

// TestClaimTrustworthy: trustworthy = generator ∧ shape ∧ thresholds, in every export.
func TestClaimTrustworthy(t *testing.T) {
	shape := &ShapeReport{Reference: "ref", Fidelity: ShapeCompare{Name: "plan_inter_arrival", Skipped: "closed loop"}, Reuse: -1, RefReuse: -1}
	// The thresholds part is analyze/judge's (TestClaimThresholds there judges the gates).
	agreed := analyze.NewClaimPart(analyze.StatusValidated, "2 gates agreed in g.yaml", nil)
	unagreed := analyze.NewClaimPart(analyze.StatusNotValidated, "thresholds not validated: the gates are not agreed", nil)
	type parts struct {
		g     *GeneratorValidation
		shape *ShapeReport
		th    analyze.ClaimPart
	}
	all := parts{passedValidation(), shape, agreed}
	for _, c := range []struct {
		name string
		drop func(o *parts)
		want bool
	}{
		{"all three", func(*parts) {}, true},
		{"no generator", func(o *parts) { o.g = nil }, false},
		{"no shape", func(o *parts) { o.shape = nil }, false},
		{"no agreed gates", func(o *parts) { o.th = unagreed }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := all
			c.drop(&o)
			s := &analyze.Summary{Verdict: analyze.Verdict{Known: true, Kept: true}, Counts: analyze.Counts{Profile: 1, Valid: 1}}
			if got := analyze.NewClaim(s, GeneratorClaim(s, o.g, "", thisRun), ShapeClaim(o.shape), o.th).Trustworthy; got != c.want {
				t.Fatalf("trustworthy %v, want %v: %+v", got, c.want, s.Claim)
			}
			var js, csv, con bytes.Buffer
			if err := output.WriteAIPerfJSON(&js, s); err != nil {
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
			if err := output.WriteAIPerfCSV(&csv, s); err != nil {
				t.Fatal(err)
			}
			wantCSV := "trustworthy,,false,"
			if c.want {
				wantCSV = "trustworthy,,true,"
			}
			if !strings.Contains(csv.String(), "Claim,Status,Validated,Evidence") || !strings.Contains(csv.String(), wantCSV) {
				t.Errorf("CSV lacks the claim:\n%s", csv.String())
			}
			if err := output.WriteConsole(&con, s); err != nil {
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
	st := func(p50, p99 float64) *analyze.Stats {
		s := &analyze.Stats{Count: 10}
		s.P[4], s.P[8] = p50, p99
		return s
	}
	summary := func(ttft99, lag99, cpu float64, failed int64) *analyze.Summary {
		return &analyze.Summary{Counts: analyze.Counts{Valid: 10, Errors: failed}, Workers: []analyze.WorkerSummary{{Worker: 0, CPUPct: cpu}, {Worker: 1, CPUPct: -1}},
			Results: []analyze.Result{{MetricDef: builtinDef(analyze.MTimeToFirstToken), Stats: st(20.3, ttft99)}, {MetricDef: builtinDef(analyze.MInterTokenLatency), Stats: st(5, 5.2)},
				{MetricDef: builtinDef(analyze.MInterChunkLatency), Stats: st(5, 6)}, {MetricDef: builtinDef(analyze.MDispatchLag), Stats: st(0.1, lag99)}}}
	}
	repeat := func(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }
	share := func(ttft, receive float64, matched int) *ClientShare {
		return &ClientShare{Matched: matched, TTFT: repeat(ttft, matched), Receive: repeat(receive, 5*matched),
			ServerTTFT: repeat(44, matched), ReadDelay: repeat(0.5, matched), MinDelay: min(ttft, receive)}
	}
	mock, tol := MockTiming{TTFTMs: 20, ITLMs: 5}, DefaultTolerances()
	cases := []struct {
		name    string
		s       *analyze.Summary
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
		{"cpu shared", &analyze.Summary{Counts: analyze.Counts{Valid: 10}, Workers: []analyze.WorkerSummary{{Worker: 0, CPU: 1, CPUPct: 50}, {Worker: 1, CPU: 1, CPUPct: 45}, {Worker: 2, CPU: 0, CPUPct: 60}},
			Results: summary(25, 0.5, 10, 0).Results}, nil, false, "2 workers sharing a CPU used 95.00% of a core", "", map[string]float64{FigWorkerCPU: 95}},
		{"nothing", &analyze.Summary{}, nil, false, "no request completed", "", nil},
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
	c.Add(analyze.ContentTiming{Index: 2, Session: 7, Turn: 1, WriteStartNs: ms(100), WriteEndNs: ms(100.1), ContentNs: []int64{ms(130.4), ms(135.2)}})
	c.Add(analyze.ContentTiming{Index: 1, Session: 7, Turn: 0, WriteStartNs: ms(10), WriteEndNs: ms(10.2), ContentNs: []int64{ms(31), ms(36.5), ms(41)}})
	c.Add(analyze.ContentTiming{Index: 3, Session: 8, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26)}})
	c.Add(analyze.ContentTiming{Index: 4, Session: 9, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26), ms(30)}})
	c.Add(analyze.ContentTiming{Index: 5, Session: 10, WriteStartNs: ms(5), WriteEndNs: ms(5.1), ContentNs: []int64{ms(26)}})
	c.Add(analyze.ContentTiming{Index: 6, Session: 11, WriteStartNs: ms(5), WriteEndNs: ms(5.1)})
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
	kept := analyze.Verdict{Known: true, Kept: true, LagKnown: true, DispatchLagP99Ms: 0.3, MaxLagMs: 1}
	late := analyze.Verdict{Known: true, Reasons: []string{"dispatch lag p99 3 ms > 1 ms"}, LagKnown: true, DispatchLagP99Ms: 3, MaxLagMs: 1}
	cases := []struct {
		name    string
		v       analyze.Verdict
		g       *GeneratorValidation
		head    string
		failed  []string // the parts marked failed
		present []string
	}{
		{"nothing validated", kept, nil, "Benchmark claim: trustworthy: not shown (generator, shape, thresholds not validated", nil,
			[]string{"  generator   not validated: no generator validation", "  schedule    kept: dispatch lag p99 0.30 ms (bound 1.00 ms)", "  thresholds  not validated: no gates"}},
		{"generator failed", kept, failedGen, "Benchmark claim: trustworthy: NO (generator failed)", []string{"generator"},
			[]string{"  generator   FAILED: the generator validation  failed: TTFT p99 error 9 ms > 2 ms"}},
		{"schedule not kept", late, passedValidation(), "Benchmark claim: trustworthy: NO (generator, schedule failed)", []string{"generator", "schedule"},
			[]string{"  generator   FAILED: this run did not keep its schedule (see schedule)", "  schedule    FAILED: not kept: dispatch lag p99 3 ms > 1 ms; these numbers describe the client"}},
		{"not judged", analyze.Verdict{}, nil, "Benchmark claim: trustworthy: not shown (generator, schedule, shape, thresholds not validated", nil,
			[]string{"  schedule    not judged: no request was sent"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &analyze.Summary{Verdict: c.v, Counts: analyze.Counts{Profile: 1, Valid: 1}}
			// No gates: the thresholds part as analyze/judge says it (TestClaimThresholds there).
			noGates := analyze.NewClaimPart(analyze.StatusNotValidated, "thresholds not validated: no gates (--gate, --gates FILE)", nil)
			analyze.NewClaim(s, GeneratorClaim(s, c.g, "", thisRun), ShapeClaim(nil), noGates)
			lines := output.ClaimConsoleLines(s.Claim)
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
			text := strings.Join(output.ClaimLines(s.Claim), "\n")
			for _, p := range c.present {
				if !strings.Contains(text, p) {
					t.Errorf("no %q in:\n%s", p, text)
				}
			}
			for _, color := range []bool{false, true} {
				var con bytes.Buffer
				if err := output.WriteConsoleColor(&con, s, color); err != nil {
					t.Fatal(err)
				}
				if red := strings.Count(con.String(), ansiRed); red != map[bool]int{false: 0, true: len(c.failed) + min(len(c.failed), 1)}[color] {
					t.Errorf("color %v: %d red lines for %d failed parts:\n%s", color, red, len(c.failed), con.String())
				}
			}
		})
	}
}
