package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/adaptive"
	"github.com/llmbench/llmbench/internal/pyjson"
	"github.com/llmbench/llmbench/tokenizer"
)

// The fixture (testdata/mkfixture.sh) is a real run against mockllm: 240 Poisson requests at
// 60/s, 4 batch slots, TTFT jitter and 3 % errors. testdata/*/adaptive_scale_events.jsonl are
// events written by hand for it: four windows (the last extended) whose SLA values were
// computed from the run's per-request export (profile_export.jsonl) with numpy's linear
// percentile, outside this code (testdata/handvalues.py).
func options(t *testing.T) Options {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return Options{RunDirs: []string{"testdata/run"}, PlanPath: "testdata/fixture.llmplan", Tokenizer: tok}
}

// hand are the windows' request counts from the per-request export: judged (sent in the
// window), straddling (sent before it, ended after its start).
var hand = [][2]int{{64, 4}, {56, 2}, {76, 2}, {9, 5}}

func TestAudit(t *testing.T) {
	cases := []struct {
		dir      string
		ok       bool
		bad      []int  // the windows that disagree
		why      string // in the disagreeing window's Why, or a problem
		same     []bool
		boundary bool // window 2 borderline
	}{
		{dir: "agree", ok: true, same: []bool{true, true, true, true}},
		{dir: "wrong-value", bad: []int{2}, why: "ttft:p95: the event has 45, the logs give 52.1794 (beyond equality: the same requests)"},
		{dir: "wrong-decision", bad: []int{0}, why: "the event says pass, but its own values fail; the event says pass, the logs say fail"},
		{dir: "fewer-records", ok: true, same: []bool{true, false, true, true}},
		{dir: "borderline", ok: true, same: []bool{true, true, false, true}, boundary: true},
		{dir: "wrong-summary", why: "candidates 8: 0 of 1 passed, 4: 1 of 2 passed, but its window events give 8: 0 of 1 passed, 4: 2 of 2 passed; testdata/wrong-summary/adaptive_scale_summary.json: 0 of 1 sustain windows passed, but its window events give 1 of 1",
			same: []bool{true, true, true, true}},
		{dir: "no-summary", why: "no adaptive_scale_summary.json beside"},
	}
	for _, c := range cases {
		rep, err := Run(filepath.Join("testdata", c.dir, adaptive.EventsFile), options(t))
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if rep.OK != c.ok {
			t.Errorf("%s: OK %v, want %v: %s", c.dir, rep.OK, c.ok, rep.Line())
		}
		var bad []int
		whys := strings.Join(rep.Problems, "; ")
		for _, w := range rep.Disagreeing() {
			bad = append(bad, w.Index)
			whys += w.Why
		}
		if len(bad) != len(c.bad) || len(bad) > 0 && bad[0] != c.bad[0] {
			t.Errorf("%s: disagreeing windows %v, want %v", c.dir, bad, c.bad)
		}
		if c.why != "" && !strings.Contains(whys, c.why) {
			t.Errorf("%s: why %q, want %q", c.dir, whys, c.why)
		}
		if c.dir == "no-summary" {
			if len(rep.Windows) != 0 || !strings.Contains(rep.Line(), "Adaptive audit: FAIL (no adaptive_scale_summary.json") {
				t.Errorf("no-summary: %s", rep.Line())
			}
			continue
		}
		if len(rep.Windows) != len(hand) {
			t.Fatalf("%s: %d windows", c.dir, len(rep.Windows))
		}
		for i, w := range rep.Windows {
			if w.Verdict.Completed != hand[i][0] || w.Verdict.Straddling != hand[i][1] {
				t.Errorf("%s: window %d: %d judged, %d straddling; the export gives %v", c.dir, i, w.Verdict.Completed, w.Verdict.Straddling, hand[i])
			}
			if c.same != nil && w.SameRecords != c.same[i] {
				t.Errorf("%s: window %d: same records %v", c.dir, i, w.SameRecords)
			}
			if w.Borderline != (c.boundary && i == 2) {
				t.Errorf("%s: window %d: borderline %v", c.dir, i, w.Borderline)
			}
		}
		if w := rep.Windows[3]; !w.Extended || w.Verdict.Completed != 9 {
			t.Errorf("%s: window 3 is not the extended one: %+v", c.dir, w)
		}
		if got := rep.Control; len(got) != 2 || got[0].Value != 8 || got[1].Value != 4 {
			t.Errorf("%s: control %+v, want 8 then 4", c.dir, got)
		}
		if want := map[bool]string{true: "Adaptive audit: PASS (3 windows", false: "Adaptive audit: FAIL ("}[c.ok]; !strings.HasPrefix(rep.Line(), want) ||
			len(c.bad) > 0 && !strings.Contains(rep.Line(), "1 of 4 windows disagree with the raw logs") {
			t.Errorf("%s: %s", c.dir, rep.Line())
		}
	}
}

// TestAuditValuesAreTheHandComputedOnes: in the agreeing fixture every recomputed value is
// the hand-computed one exactly (the same requests, the same percentile definition).
func TestAuditValuesAreTheHandComputedOnes(t *testing.T) {
	rep, err := Run(filepath.Join("testdata", "agree", adaptive.EventsFile), options(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Windows {
		for _, c := range w.Values {
			if c.Event != c.Recomputed {
				t.Errorf("window %d %s: recomputed %v, by hand %v", w.Index, c.SLA, c.Recomputed, c.Event)
			}
		}
	}
	if rep.Windows[0].Verdict.Passed || rep.Windows[0].Verdict.Binding != "ttft:p95" || rep.Windows[1].Verdict.Binding != "error_rate:avg" {
		t.Errorf("decisions: %+v / %+v", rep.Windows[0].Verdict, rep.Windows[1].Verdict)
	}
	var console bytes.Buffer
	if err := rep.WriteConsole(&console, 1796671318228525993); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"window 0 ramp concurrency 8 [0.50 s, 1.50 s): 64 requests (event 64), 4 straddling (event 4); ttft:p95 53.8357 ms (event 53.8357)",
		"; FAIL (event FAIL): agrees", "window 3 sustain concurrency 4", "extended, not judged: agrees"} {
		if !strings.Contains(console.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, console.String())
		}
	}
	b, err := pyjson.MarshalIndent(rep.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Passed  bool `json:"passed"`
		Windows []struct {
			Agrees    bool                                    `json:"agrees"`
			SLAValues map[string]struct{ Recomputed float64 } `json:"sla_values"`
			Passed    struct{ Event *bool }                   `json:"passed"`
		} `json:"windows"`
	}
	if err := json.Unmarshal(b, &back); err != nil || !back.Passed || len(back.Windows) != 4 || back.Windows[3].Passed.Event != nil ||
		back.Windows[2].SLAValues["ttft:p95"].Recomputed != rep.Windows[2].Values[0].Recomputed {
		t.Errorf("JSON block: %v\n%s", err, b)
	}
}

func TestFind(t *testing.T) {
	if got := Find([]string{"testdata/run", "testdata/agree"}); got != filepath.Join("testdata/agree", adaptive.EventsFile) {
		t.Errorf("Find = %q", got)
	}
	if got := Find([]string{"testdata/run"}); got != "" {
		t.Errorf("Find = %q", got)
	}
}

func TestRunRefusesABadEventsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, adaptive.EventsFile)
	writeFile(t, path, `{"schema_version":1,"event":"adaptive_window"}`+"\n"+`{"schema_version":9,"event":"adaptive_window"}`+"\n")
	if _, err := Run(path, options(t)); err == nil || !strings.Contains(err.Error(), path+":2: schema_version 9, this build reads 1") {
		t.Errorf("error %v", err)
	}
	writeFile(t, path, "")
	writeFile(t, filepath.Join(dir, adaptive.SummaryFile), `{"schema_version":1,"slas":["ttft:p95:le:x"]}`)
	rep, err := Run(path, options(t))
	if err != nil || rep.OK || !strings.Contains(rep.Line(), `threshold "x" is not a number: its windows cannot be recomputed`) {
		t.Errorf("%v: %s", err, rep.Line())
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
