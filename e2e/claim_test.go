package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/rawlog"
)

// claimJSON is llmbench.benchmark_claim of profile_export_aiperf.json.
type claimJSON struct {
	LLMBench struct {
		Claim   map[string]json.RawMessage `json:"benchmark_claim"`
		Verdict struct {
			Kept bool `json:"schedule_kept"`
		} `json:"verdict"`
	} `json:"llmbench"`
}

type claimPartJSON struct {
	Validated bool               `json:"validated"`
	Status    string             `json:"status"`
	Evidence  string             `json:"evidence"`
	Figures   map[string]float64 `json:"figures"`
}

func readClaim(t *testing.T, dir string) (parts map[string]claimPartJSON, trustworthy bool) {
	t.Helper()
	parts, trustworthy, _ = readClaimVerdict(t, dir)
	return parts, trustworthy
}

// readClaimVerdict is readClaim plus whether the run's own verdict says the schedule was kept.
func readClaimVerdict(t *testing.T, dir string) (parts map[string]claimPartJSON, trustworthy, kept bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc claimJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	parts = map[string]claimPartJSON{}
	for _, k := range []string{"generator", "shape", "thresholds"} {
		var p claimPartJSON
		if err := json.Unmarshal(doc.LLMBench.Claim[k], &p); err != nil {
			t.Fatalf("benchmark_claim.%s: %v", k, err)
		}
		parts[k] = p
	}
	if err := json.Unmarshal(doc.LLMBench.Claim["trustworthy"], &trustworthy); err != nil {
		t.Fatal(err)
	}
	return parts, trustworthy, doc.LLMBench.Verdict.Kept
}

// TestBenchmarkClaim replays a Mooncake slice's plan with profile --validate-generator against mockllm
// at low concurrency: the generator validation (against the in-process mock) is written into
// the run directory and passes; --validate-shape passes against the slice itself and fails
// against another Mooncake slice; --gates marks gates agreed; a latency gate without
// capacity context leaves the thresholds unvalidated; --require-trustworthy exits 1 exactly
// when the claim is not trustworthy.
func TestBenchmarkClaim(t *testing.T) {
	mock := startMock(t, "--ttft", "2ms", "--itl", "1ms")
	dir := t.TempDir()
	sliceA, sliceB := filepath.Join("testdata", "mooncake_slice_a.jsonl"), filepath.Join("testdata", "mooncake_slice_b.jsonl")
	plan := compile(t, dir, "--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--input-file", sliceA, "--custom-dataset-type", "mooncake_trace", "--extra-inputs", "ignore_eos:true")
	// profile --plan: replay and analyse the plan, after the generator validation.
	run := filepath.Join(dir, "run")
	pr := command(t, bin.profile, "--plan", plan, "--url", mock.URL, "--output-dir", run, "--no-pin", "--no-gpu-telemetry",
		"--validate-generator", "--validate-ttft", "2ms", "--validate-itl", "1ms", "--ui-type", "none")
	// 1 only when a check failed on this loaded machine, and then said so (docs/exit-codes.md).
	checkFailed := strings.Contains(pr.stderr, "analyze: GENERATOR FAILED") || strings.Contains(pr.stderr, "analyze: SCHEDULE NOT KEPT")
	if (pr.code != 0 && !(pr.code == 1 && checkFailed)) || !strings.Contains(pr.stderr, "generator validation: replaying 40 profile requests") ||
		!strings.Contains(pr.stdout, "Benchmark claim:") || !strings.Contains(pr.stdout, "  generator ") {
		t.Fatalf("profile --validate-generator: exit %d\nstdout:\n%s\nstderr:\n%s", pr.code, pr.stdout, pr.stderr)
	}

	gv, err := benchclaim.ReadGeneratorValidation(filepath.Join(run, benchclaim.GeneratorValidationName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := rawlog.ReadManifest(run)
	if err != nil {
		t.Fatal(err)
	}
	if gv.PlanHash != m.PlanHash || gv.Machine.Host != m.Host || gv.Workers != len(m.Workers) || gv.Figures[benchclaim.FigRequests] != 40 ||
		gv.Mock.TTFTMs != 2 || gv.Mock.ITLMs != 1 || !gv.SharedCPUs {
		t.Fatalf("validation file: %+v (run.json plan %s host %s, %d workers)", gv, m.PlanHash, m.Host, len(m.Workers))
	}
	// Every request met its record in the mock server's schedule log, so the client's own
	// share was measured (and, on any machine, is not negative beyond the clocks' agreement).
	if gv.Figures[benchclaim.FigMatched] != 40 || gv.Figures[benchclaim.FigClientTTFTP50] < -0.5 || gv.Figures[benchclaim.FigReceiveP50] < -0.5 {
		t.Errorf("client's share: matched %v of 40, TTFT share p50 %v ms, receive delay p50 %v ms (figures %v, notes %q)",
			gv.Figures[benchclaim.FigMatched], gv.Figures[benchclaim.FigClientTTFTP50], gv.Figures[benchclaim.FigReceiveP50], gv.Figures, gv.Notes)
	}
	if !gv.Passed {
		// The tolerances are milliseconds; a CI machine loaded past them fails the
		// validation, which then must say why, and the claim must follow it.
		t.Logf("generator validation failed on this machine: %v (figures %v)", gv.Reasons, gv.Figures)
		if len(gv.Reasons) == 0 {
			t.Fatal("a failed validation gives no reason")
		}
	}

	// A validation kept elsewhere is reused with --generator-validation, but only for the
	// plan it validated.
	other := *gv
	other.PlanHash = strings.Repeat("0", 64)
	otherFile := filepath.Join(dir, "other_validation.json")
	if err := benchclaim.WriteGeneratorValidation(otherFile, &other); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	command(t, bin.analyze, "--output-dir", out, "--export-level", "summary", "--generator-validation", otherFile, run)
	parts, _ := readClaim(t, out)
	switch p := parts["generator"]; p.Status {
	case analyze.StatusNotValidated:
		if !strings.Contains(p.Evidence, "does not stand for this run: it validated plan") {
			t.Errorf("another plan's validation: %+v", p)
		}
	case analyze.StatusFailed: // the run itself did not keep its schedule on this machine
		if !strings.Contains(p.Evidence, "did not keep its schedule") {
			t.Errorf("another plan's validation: %+v", p)
		}
	default:
		t.Errorf("another plan's validation counted: %+v", p)
	}

	gates := filepath.Join(dir, "gates.yaml")
	if err := os.WriteFile(gates, []byte("version: 1\ngates:\n  - gate: request_count>=40\n    owner: e2e\n    reason: every planned request completes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		args            []string
		shape, thresh   string
		trustworthy     bool // when the generator validation passed
		evidence, where string
	}{
		{"own trace", []string{"--validate-shape", sliceA, "--gates", gates}, analyze.StatusValidated, analyze.StatusValidated, true, "matches", "shape"},
		{"other slice", []string{"--validate-shape", sliceB, "--gates", gates}, analyze.StatusFailed, analyze.StatusValidated, false, "isl distribution differs", "shape"},
		{"own plan as reference", []string{"--validate-shape", plan, "--gates", gates}, analyze.StatusValidated, analyze.StatusValidated, true, "prefix reuse", "shape"},
		{"no reference", []string{"--gates", gates}, analyze.StatusNotValidated, analyze.StatusValidated, false, "no reference given", "shape"},
		{"latency gate without context", []string{"--validate-shape", sliceA, "--gate", "time_to_first_token.p99<10000"}, analyze.StatusValidated, analyze.StatusNotValidated, false,
			"thresholds not validated: TTFT gate has no KV-cache/GPU context", "thresholds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			r := command(t, bin.analyze, append(append([]string{"--output-dir", out, "--export-level", "summary", "--require-trustworthy"}, c.args...), run)...)
			parts, trustworthy, kept := readClaimVerdict(t, out)
			if parts["shape"].Status != c.shape || parts["thresholds"].Status != c.thresh {
				t.Errorf("shape %s, thresholds %s; want %s, %s: %+v", parts["shape"].Status, parts["thresholds"].Status, c.shape, c.thresh, parts)
			}
			if !strings.Contains(parts[c.where].Evidence, c.evidence) {
				t.Errorf("%s evidence %q lacks %q", c.where, parts[c.where].Evidence, c.evidence)
			}
			// The generator part holds when both the validation and the run's own verdict
			// hold; on a loaded machine either may fail, and the claim must follow it.
			genOK := gv.Passed && kept
			wantGen := analyze.StatusValidated
			if !genOK {
				wantGen = analyze.StatusFailed
			}
			if parts["generator"].Status != wantGen {
				t.Errorf("generator %s, want %s (validation passed %v, schedule kept %v): %s", parts["generator"].Status, wantGen, gv.Passed, kept, parts["generator"].Evidence)
			}
			want := c.trustworthy && genOK
			if trustworthy != want {
				t.Errorf("trustworthy %v, want %v", trustworthy, want)
			}
			wantCode := 0
			if !want {
				wantCode = 1
			}
			if r.code != wantCode || (!want && !strings.Contains(r.stderr, "--require-trustworthy: the benchmark claim is not trustworthy")) {
				t.Errorf("exit %d, want %d: %s", r.code, wantCode, r.stderr)
			}
			if !strings.Contains(r.stdout, "Benchmark claim:") {
				t.Errorf("console lacks the claim:\n%s", r.stdout)
			}
		})
	}
}
