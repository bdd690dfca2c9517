package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../../testdata/compat")

// compatDir holds a run recorded by an older release: commit c38cabb's plan, replay and
// mockllm wrote it, raw log format 1 (testdata/compat/README.md).
const compatDir = "../../testdata/compat/c38cabb"

// copyCompat copies the old run (its files byte for byte) and its plan into a fresh folder
// and returns the run directory and the plan.
func copyCompat(t *testing.T) (run, plan string) {
	t.Helper()
	root := t.TempDir()
	run = filepath.Join(root, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(compatDir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	cp := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range ents {
		cp(filepath.Join(compatDir, "run", e.Name()), filepath.Join(run, e.Name()))
	}
	plan = filepath.Join(root, "old.plan")
	cp(filepath.Join(compatDir, "old.plan"), plan)
	return run, plan
}

// record is what the per-request JSONL says of one request.
type record struct {
	Metadata struct {
		Group *string `json:"group"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value any `json:"value"`
	} `json:"metrics"`
}

func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// variable lines of the console output: where the exports went.
var pathLines = regexp.MustCompile(`(?m)^(Exports in|Report:) .*\n`)

// TestUserMetricsOverOldRun (issue 27): a run recorded by an older release (raw log format
// 1), re-analysed under new definitions: a user metric from --metric and one from
// --metrics-file, a --where selection and --group-by groups. The groups' averages are what
// the per-request export implies, the export records how the numbers were made, a gate on a
// user metric sets the exit code, goodput takes a user metric, and the console output is
// the golden file's.
func TestUserMetricsOverOldRun(t *testing.T) {
	run, plan := copyCompat(t)
	metricsFile := filepath.Join(t.TempDir(), "metrics.yaml")
	if err := os.WriteFile(metricsFile, []byte("version: 1\nmetrics:\n  - name: decode_ms\n    expression: latency_ms - ttft_ms\n    unit: ms\n    description: the response after its first token\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"--plan", plan, "--output-dir", out, "--no-html", "--metrics-file", metricsFile,
		"--metric", "third_event_ms = chunks_ms[2]", "--where", "isl > 100", "--group-by", "turn",
		"--goodput", "third_event_ms:9.2", "--gate", "third_event_ms.p99<1000", "--gate", "decode_ms.max<1000", run}
	code, stdout, stderr := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	golden := filepath.Join(compatDir, "analyze.console.golden")
	got := pathLines.ReplaceAllString(stdout, "")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("console output differs from %s (go test -update rewrites it):\n%s", golden, got)
	}

	var summary map[string]any
	b, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	own := summary["llmbench"].(map[string]any)
	sel := own["selection"].(map[string]any)
	if sel["where"] != "isl > 100" || sel["group_by"] != "turn" {
		t.Errorf("the export does not say how the requests were selected: %v", sel)
	}
	// Per group, from the per-request export: the mean of third_event_ms and decode_ms.
	recs := readRecords(t, filepath.Join(out, "profile_export.jsonl"))
	type acc struct{ third, decode, n, nDecode float64 }
	byGroup := map[string]*acc{}
	for _, r := range recs {
		if r.Metadata.Group == nil {
			t.Fatal("a record without its group")
		}
		a := byGroup[*r.Metadata.Group]
		if a == nil {
			a = &acc{}
			byGroup[*r.Metadata.Group] = a
		}
		if v, ok := r.Metrics["third_event_ms"].Value.(float64); ok {
			a.third += v
			a.n++
		}
		if v, ok := r.Metrics["decode_ms"].Value.(float64); ok {
			a.decode += v
			a.nDecode++
		}
	}
	groups := own["groups"].([]any)
	if len(groups) != len(byGroup) || len(groups) < 2 {
		t.Fatalf("%d groups in the JSON, %d in the JSONL", len(groups), len(byGroup))
	}
	for _, g := range groups {
		g := g.(map[string]any)
		key := g["key"].(string)
		a := byGroup[key]
		if a == nil {
			t.Fatalf("group %s is not in the JSONL", key)
		}
		m := g["metrics"].(map[string]any)
		for _, c := range []struct {
			tag       string
			sum, n    float64
			wantCount float64
		}{{"third_event_ms", a.third, a.n, a.n}, {"decode_ms", a.decode, a.nDecode, a.nDecode}} {
			st := m[c.tag].(map[string]any)
			if avg := st["avg"].(float64); math.Abs(avg-c.sum/c.n) > 1e-9 || st["count"].(float64) != c.wantCount {
				t.Errorf("group %s %s: avg %v count %v; the JSONL implies %v over %v", key, c.tag, avg, st["count"], c.sum/c.n, c.n)
			}
		}
	}
	// The user metric's own entry: AIPerf's shape and its definition.
	third := summary["third_event_ms"].(map[string]any)
	for _, k := range []string{"unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"} {
		if _, ok := third[k]; !ok {
			t.Errorf("third_event_ms has no %s: %v", k, third)
		}
	}
	if d := summary["decode_ms"].(map[string]any); d["unit"] != "ms" {
		t.Errorf("decode_ms unit %v, want the metrics file's ms", d["unit"])
	}
	csv, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), "third_event_ms") || !strings.Contains(string(csv), "decode_ms") {
		t.Errorf("the CSV has no user metric rows:\n%s", csv)
	}

	// A gate on a user metric sets the exit status.
	code, stdout, _ = runCmd("--plan", plan, "--output-dir", filepath.Join(t.TempDir(), "o"), "--no-html",
		"--metric", "third_event_ms = chunks_ms[2]", "--gate", "third_event_ms.p99<1", run)
	if code != 1 || !strings.Contains(stdout, "Gate third_event_ms.p99<1: FAIL") {
		t.Errorf("gate on a user metric: exit %d, want 1\n%s", code, stdout)
	}
}

// TestBadUserExpressions (issue 27): a malformed or ill-typed expression, or a bad
// definition, is one line naming the metric (or flag) and the column, exit 2, before any log
// is read and with nothing written.
func TestBadUserExpressions(t *testing.T) {
	run, plan := copyCompat(t)
	badFile := filepath.Join(t.TempDir(), "metrics.yaml")
	if err := os.WriteFile(badFile, []byte("version: 1\nmetrics:\n  - name: ok_ms\n    expression: ttft_ms\n  - name: broken_ms\n    expression: gaps_ms[0] +\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"syntax", []string{"--metric", "x_ms = chunks_ms[2"}, []string{"--metric x_ms: column 12: Syntax error"}},
		{"misspelt variable", []string{"--metric", "x_ms = tfft_ms * 2"}, []string{"--metric x_ms: column 1:", "did you mean ttft_ms?"}},
		{"int over int", []string{"--metric", "x = size(gaps_ms) / size(chunks_ms)"}, []string{"--metric x: column 15:", "a division of two ints truncates", "write double(a) / b"}},
		{"modulo of a count", []string{"--metric", "x = osl % 2"}, []string{"--metric x: column 5:", "write int(osl) % 2"}},
		{"not a number", []string{"--metric", "x = chunks_ms"}, []string{"--metric x:", "want double or int or uint"}},
		{"no name", []string{"--metric", "chunks_ms[2]"}, []string{"--metric \"chunks_ms[2]\": want NAME = EXPRESSION"}},
		{"built-in name", []string{"--metric", "time_to_first_token = ttft_ms"}, []string{"is a built-in metric"}},
		{"variable name", []string{"--metric", "isl = osl"}, []string{"is a variable"}},
		{"where not bool", []string{"--where", "isl + 1"}, []string{"--where:", "want bool"}},
		{"where syntax", []string{"--where", "isl >"}, []string{"--where: column "}},
		{"group-by list", []string{"--group-by", "chunks_ms"}, []string{"--group-by:", "want string"}},
		{"metrics file", []string{"--metrics-file", badFile}, []string{"--metrics-file " + badFile + " line 5: metric broken_ms: column "}},
		{"gate on unknown user metric", []string{"--metric", "a_ms = ttft_ms", "--gate", "b_ms.p99<3"}, []string{`--gate "b_ms.p99<3": unknown metric`}},
		{"parquet column clash", []string{"--metric", "outcome = ttft_ms", "--export", "parquet"}, []string{`metric "outcome" is also a column of requests.parquet`}},
		{"where selects nothing", []string{"--where", "isl > 1000000"}, []string{"--where isl > 1000000: selects none of the profile requests"}},
		{"export format", []string{"--export", "feather"}, []string{`--export "feather": want parquet`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			before := files(t, run)
			code, stdout, stderr := runCmd(append(append([]string{"--plan", plan, "--output-dir", out}, c.args...), run)...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "analyze: ") {
				t.Fatalf("exit %d, want 2 and one line\nstdout: %s\nstderr: %q", code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input left %s behind", out)
			}
			if after := files(t, run); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("bad input wrote into the run: %v", after)
			}
		})
	}
}

// TestCompareUserMetric (issue 27): `analyze compare --metric` compares a user metric like
// the built-ins: twice the TTFT of rate-b (25 ms) against rate-a's (20 ms) is a significant
// regression --fail-on-regression on the user metric catches; a bad definition is exit 2.
func TestCompareUserMetric(t *testing.T) {
	root := t.TempDir()
	a := copyFixture(t, root, "rate-a", "rate.llmplan")
	b := copyFixture(t, root, "rate-b", "rate.llmplan")
	out := filepath.Join(root, "cmp")
	code, stdout, stderr := runCmd("compare", "--max-error-rate", "0.1", "--output-dir", out, "--no-html",
		"--metric", "ttft_x2 = ttft_ms * 2.0", "--fail-on-regression", "ttft_x2:10", a, b)
	if code != 1 || !strings.Contains(stderr, "REGRESSION: ttft_x2 p50 of rate-b") || !strings.Contains(stdout, "ttft_x2 () rate-b:") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd("compare", "--metric", "x = ttft_ms +", a, b); code != 2 || !strings.Contains(stderr, "--metric x: column") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bad --metric: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCmd("compare", "--fail-on-regression", "ttft_x2:10", a, b); code != 2 || !strings.Contains(stderr, `metric "ttft_x2"`) {
		t.Errorf("threshold on an undefined metric: exit %d %q", code, stderr)
	}
}

// TestParquetBadInputLeavesNothing: an analysis refused once the logs were read (a TTFT gate
// on a run that did not stream) leaves no Parquet part file and no output folder behind; a
// good one leaves only the two files.
func TestParquetBadInputLeavesNothing(t *testing.T) {
	plain := buildRunWith(t, 10, 0, false)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCmd("--export", "parquet", "--output-dir", out, "--gate", "time_to_first_token.p99<400", plain)
	if code != 2 || !strings.Contains(stderr, "the plan does not stream") {
		t.Fatalf("exit %d %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input left %s behind: %v", out, files(t, out))
	}
	if code, _, stderr := runCmd("--export", "parquet", "--output-dir", out, "--no-html", plain); code != 0 {
		t.Fatalf("exit %d %q", code, stderr)
	}
	var parquet []string
	for _, f := range files(t, out) {
		if strings.Contains(f, "parquet") {
			parquet = append(parquet, f)
		}
	}
	if strings.Join(parquet, ",") != "chunks.parquet,requests.parquet" {
		t.Errorf("parquet files %v", parquet)
	}
}

// TestRecordWithOldCommit builds commit c38cabb of this repository (git archive), records
// the compat run with its binaries (scripts/record-compat.sh) and analyses that fresh
// recording under a user metric, a selection and groups. It needs git, the repository's
// history and minutes of compiling: it runs with LLMBENCH_COMPAT_BUILD=1 only
// (TestUserMetricsOverOldRun checks the recording kept in testdata every time).
func TestRecordWithOldCommit(t *testing.T) {
	if os.Getenv("LLMBENCH_COMPAT_BUILD") != "1" {
		t.Skip("set LLMBENCH_COMPAT_BUILD=1 to build c38cabb and record a run with it (minutes)")
	}
	rec := filepath.Join(t.TempDir(), "rec")
	port := freePort(t)
	cmd := exec.Command("bash", "../../scripts/record-compat.sh", "c38cabb", port, rec)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCmd("--plan", filepath.Join(rec, "old.plan"), "--output-dir", out, "--no-html",
		"--metric", "third_event_ms = chunks_ms[2]", "--where", "isl > 0", "--group-by", "turn", "--gate", "third_event_ms.p99<1000", filepath.Join(rec, "run"))
	if code != 0 || !strings.Contains(stdout, "Group turn = 2") || !strings.Contains(stdout, "Gate third_event_ms.p99<1000: PASS") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// freePort is a loopback port free a moment ago (the old mockllm takes an address, not :0).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestWhereKeepsFailures: a selection chooses which successful requests the metrics
// describe; it never takes a failure out of the error count, the health or the gates. A
// failed request has no ttft_ms, latency_ms, osl, chunks_ms or usage, so every selection
// over them gave it no value and dropped it, and a run with 6 of 40 requests failed passed
// its error-rate gate (#38 item 1). Each gate's line says what the selection left out.
func TestWhereKeepsFailures(t *testing.T) {
	failing := buildRun(t, 40, 7) // requests 6, 13, 20, 27, 34 fail with HTTP 500: 5 of 40
	for _, c := range []struct {
		where    string
		leftOut  int // successful requests the selection leaves out
		maxError string
		code     int
		gate     string
	}{
		{"ttft_ms < 5000.0", 0, "0", 1, "Gate error rate <= 0: FAIL (5 of 40 profile requests failed, 12.50%"},
		{"latency_ms < 5000.0", 0, "0", 1, "FAIL (5 of 40"},
		{"osl > 0", 0, "0", 1, "FAIL (5 of 40"},
		{"osl >= 8", 0, "0", 1, "FAIL (5 of 40"},
		{"chunks_ms[0] > 0.0", 0, "0", 1, "FAIL (5 of 40"},
		{"size(gaps_ms) > 0", 0, "0", 1, "FAIL (5 of 40"},
		{"usage.completion_tokens > 0", 0, "0", 1, "FAIL (5 of 40"},
		{"usage.prompt_tokens == 50", 0, "0", 1, "FAIL (5 of 40"},
		{`error == ""`, 0, "0", 1, "FAIL (5 of 40"},
		{"valid", 0, "0", 1, "FAIL (5 of 40"},
		{"status == 200", 0, "0", 1, "FAIL (5 of 40"},
		{"index >= 20", 18, "0", 1, "FAIL (5 of 40"}, // 0..19 hold 2 failures, kept
		{"ttft_ms < 0.0", 35, "0", 1, "FAIL (5 of 40"},
		{"ttft_ms < 5000.0", 0, "0.2", 0, "Gate error rate <= 0.2: PASS (5 of 40 profile requests failed, 12.50%"},
	} {
		t.Run(c.where, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCmd("--where", c.where, "--max-error-rate", c.maxError, "--gate", "request_latency.p99<10000",
				"--output-dir", out, "--no-html", failing)
			note := fmt.Sprintf("--where %s: %d successful profile requests left out", c.where, c.leftOut)
			if code != c.code || !strings.Contains(stdout, c.gate) || !strings.Contains(stdout, "Errors: 5 of 40 profile requests") {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\nwant %q", code, c.code, stdout, stderr, c.gate)
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(l, "Gate ") && !strings.Contains(l, note+"; every failed request kept") {
					t.Errorf("gate line %q does not say %q", l, note)
				}
			}
			var doc map[string]any
			b, err := os.ReadFile(filepath.Join(out, "profile_export_aiperf.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if n, _ := doc["error_request_count"].(map[string]any)["avg"].(float64); n != 5 {
				t.Errorf("error_request_count %v; want 5", doc["error_request_count"])
			}
		})
	}
}

// TestMixedArithmetic: metrics as users write them, ints and doubles mixed, check and give
// the value a person means (#38 item 9): the issue's decode_tps exited 2 with "no matching
// overload for '_/_' applied to '(int, double)'".
func TestMixedArithmetic(t *testing.T) {
	run := buildRun(t, 10, 0) // 8 tokens: first at 20 ms, then every 5 ms
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCmd("--output-dir", out, "--no-html",
		"--metric", "decode_tps = (osl - 1) / ((latency_ms - ttft_ms) / 1000.0)",
		"--metric", "half_osl = osl / 2 + 0 * turn",
		"--metric", "x_ms = ttft_ms * 2",
		"--where", "osl == 8 && osl in [7, 8] && (osl > 0 ? osl : 0) >= 1",
		"--gate", "decode_tps.avg>199", "--gate", "decode_tps.avg<201", "--gate", "half_osl.avg==4", run)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"Gate decode_tps.avg>199: PASS (avg = 200", "Gate half_osl.avg==4: PASS (avg = 4;", "x_ms "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}
