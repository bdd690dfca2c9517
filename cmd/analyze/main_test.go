package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Exported file names under the default --profile-export-prefix (AIPerf's).
const (
	fileJSON       = export.DefaultExportPrefix + export.SuffixJSON
	fileCSV        = export.DefaultExportPrefix + export.SuffixCSV
	fileRecords    = export.DefaultExportPrefix + export.SuffixRecords
	fileSlicesJSON = export.DefaultExportPrefix + export.SuffixSlicesJSON
	fileSlicesCSV  = export.DefaultExportPrefix + export.SuffixSlicesCSV
)

const ms = int64(1_000_000)

func sse(obj string) string { return "data: " + obj + "\n\n" }

// buildRun writes a small streaming chat run: n requests, 20 ms to the first token, 5 ms
// between tokens, every errEvery-th answered with HTTP 500 (0: none). The plan names the
// builtin tokenizer, so the real tokenizer counts output tokens.
func buildRun(t *testing.T, n, errEvery int) string {
	t.Helper()
	return buildRunWith(t, n, errEvery, true)
}

// buildRunWith is buildRun with the plan's streaming flag as given.
func buildRunWith(t *testing.T, n, errEvery int, streaming bool) string {
	t.Helper()
	return buildRunLag(t, n, errEvery, streaming, 100_000)
}

// buildRunLag is buildRunWith with every request sent lag ns after its planned instant:
// 5 ms is a client that did not keep its schedule (the verdict's bound is 1 ms).
func buildRunLag(t *testing.T, n, errEvery int, streaming bool, lag int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pw, err := mmapds.Create(filepath.Join(dir, "plan.plan"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := mmapds.Record{SendOffsetNs: int64(i) * 10 * ms, DelayNs: -1, Session: uint32(i), ISL: 50, OSL: 8, Phase: mmapds.PhaseProfile}
		if err := pw.Add(r, []byte(`{"model":"m"}`)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := pw.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST",
		Streaming: streaming, Model: "m", OfferedRate: 100, Tokenizer: "builtin", ProfileCount: n})
	if err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%x", h)
	start := int64(1_767_225_600_000_000_000)
	f, err := os.Create(filepath.Join(dir, "worker-000.rawlog"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := rawlog.NewWriter(f, rawlog.Header{Worker: 0, PlanHash: hash, StartUnixNs: start})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		send := int64(i)*10*ms + lag
		q := &rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: int64(i) * 10 * ms,
			ReadyNs: int64(i) * 10 * ms, WriteStartNs: send, WriteEndNs: send + 10_000, HeaderNs: send + 1*ms,
			ConnectStartNs: -1, ConnectEndNs: -1}
		add := func(at int64, s string) {
			q.Body = append(q.Body, s...)
			q.ReadNs = append(q.ReadNs, at)
			q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
		}
		if errEvery > 0 && i%errEvery == errEvery-1 {
			q.Status = 500
			add(send+2*ms, `{"object":"error","message":"boom"}`)
		} else {
			add(send+1*ms, sse(`{"choices":[{"delta":{"role":"assistant","content":""}}]}`))
			for k := 0; k < 8; k++ {
				add(send+20*ms+int64(k)*5*ms, sse(`{"choices":[{"delta":{"content":" the"}}]}`))
			}
			add(send+56*ms, sse(`{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":8,"total_tokens":58}}`)+"data: [DONE]\n\n")
		}
		q.EndNs = q.ReadNs[len(q.ReadNs)-1] + 10_000
		if err := w.WriteRequest(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(rawlog.Footer{TimeNs: int64(n) * 20 * ms, Requests: n, Status: "complete"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m := &rawlog.Manifest{Tool: "llmbench", PlanHash: hash, PlanPath: "plan.plan", StartUnixNs: start,
		Workers: []rawlog.WorkerInfo{{ID: 0, Log: "worker-000.rawlog", Planned: n, Status: "complete"}},
		Status:  rawlog.StatusComplete, CommandLine: []string{"replay"}}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestExitCodes(t *testing.T) {
	ok := buildRun(t, 20, 0)
	failing := buildRun(t, 20, 10)
	lagging := buildRunLag(t, 20, 0, true, 5*ms)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"success", []string{ok}, 0, "Verdict: schedule kept", ""},
		{"gate holds", []string{"--gate", "time_to_first_token.p99<1000", "--gate", "output_sequence_length.min>=8", ok}, 0, "PASS", ""},
		{"gate fails", []string{"--gate", "time_to_first_token.p99<1", ok}, 1, "Gate time_to_first_token.p99<1: FAIL", ""},
		{"missing metric fails", []string{"--gate", "energy_per_user<1", ok}, 1, "no energy_per_user values", ""},
		{"errors fail the default error rate", []string{failing}, 1, "Gate error rate <= 0: FAIL (2 of 20", ""},
		{"errors within --max-error-rate", []string{"--max-error-rate", "0.1", failing}, 0, "PASS", ""},
		{"goodput", []string{"--goodput", "time_to_first_token:25 inter_token_latency:6", ok}, 0, "Goodput", ""},
		{"quiet failure goes to stderr", []string{"--quiet", "--gate", "request_latency.p50<1", ok}, 1, "", "FAIL"},
		{"bad gate", []string{"--gate", "ttft.p99<4", ok}, 2, "", `--gate "ttft.p99<4": unknown metric`},
		{"bad goodput", []string{"--goodput", "time_to_first_token", ok}, 2, "", "--goodput"},
		{"bad slice duration", []string{"--slice-duration", "soon", ok}, 2, "", "slice-duration"},
		{"bad error rate", []string{"--max-error-rate", "2", ok}, 2, "", "--max-error-rate"},
		{"no run dir", nil, 2, "", "no run directory"},
		{"missing run dir", []string{filepath.Join(t.TempDir(), "nope")}, 2, "", "run.json"},
		{"unknown flag", []string{"--frobnicate", ok}, 2, "", "frobnicate"},
		{"unknown tokenizer", []string{"--tokenizer", filepath.Join(t.TempDir(), "none.json"), ok}, 2, "", "--use-server-token-count"},
		{"schedule not kept fails", []string{lagging}, 1, "Verdict: schedule NOT kept", "analyze: SCHEDULE NOT KEPT: dispatch lag p99"},
		{"schedule not kept accepted", []string{"--accept-schedule-miss", lagging}, 0, "Verdict: schedule NOT kept", "accepted (--accept-schedule-miss)"},
		{"accepted miss still fails its gates", []string{"--accept-schedule-miss", "--gate", "time_to_first_token.p99<1", lagging}, 1, "FAIL", ""},
		{"server token count needs no tokenizer", []string{"--use-server-token-count", "--tokenizer", "/nonexistent", ok}, 0, "Output Sequence Length", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(c.args...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d; want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			if code == 2 && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("bad input must be one line on stderr, got %q", stderr)
			}
			if c.name == "quiet failure goes to stderr" && stdout != "" {
				t.Fatalf("--quiet printed %q", stdout)
			}
		})
	}
}

// Analysing the same directory twice gives byte-identical files.
func TestSameDirectoryTwice(t *testing.T) {
	dir := buildRun(t, 30, 7)
	files := []string{fileJSON, fileCSV, fileRecords, fileSlicesJSON, fileSlicesCSV}
	read := func() map[string][]byte {
		if code, _, stderr := runCmd("--slice-duration", "0.1", "--max-error-rate", "1", dir); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		out := map[string][]byte{}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
		return out
	}
	first, second := read(), read()
	for _, f := range files {
		if !bytes.Equal(first[f], second[f]) {
			t.Errorf("%s differs between two analyses", f)
		}
	}
	// Nothing else is left behind: no temporary files.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") || strings.HasPrefix(e.Name(), "analyze-") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestOutputDir(t *testing.T) {
	dir := buildRun(t, 5, 0)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runCmd("--output-dir", out, "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{fileJSON, fileCSV, fileRecords} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written into the run directory despite --output-dir", f)
		}
	}
}

// --export-http-trace and --export-per-chunk-data put trace_data in every JSONL record (the
// per-chunk one only the chunks); without them there is none.
func TestTraceFlags(t *testing.T) {
	dir := buildRun(t, 4, 0)
	for _, c := range []struct {
		flag        string
		trace, full bool
	}{{"", false, false}, {"--export-http-trace", true, true}, {"--export-per-chunk-data", true, false}} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"--output-dir", out, "-q", dir}
		if c.flag != "" {
			args = append([]string{c.flag}, args...)
		}
		if code, _, stderr := runCmd(args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.flag, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, fileRecords))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		if len(lines) != 4 {
			t.Fatalf("%s: %d records", c.flag, len(lines))
		}
		for _, l := range lines {
			if bytes.Contains(l, []byte(`"trace_data":{"trace_type":"llmbench"`)) != c.trace ||
				bytes.Contains(l, []byte(`"request_send_start_ns":`)) != c.full || bytes.Contains(l, []byte(`"response_chunks":[[`)) != c.trace {
				t.Fatalf("%s: record %s", c.flag, l)
			}
		}
	}
}

// TestShowTraceTiming: --show-trace-timing prints the HTTP trace table after the metrics,
// with k6's metrics and their values from the run; without it, no such table.
func TestShowTraceTiming(t *testing.T) {
	dir := buildRun(t, 4, 0)
	for _, on := range []bool{false, true} {
		args := []string{"--output-dir", filepath.Join(t.TempDir(), "out"), dir}
		if on {
			args = append([]string{"--show-trace-timing"}, args...)
		}
		code, stdout, stderr := runCmd(args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		has := strings.Contains(stdout, "HTTP Trace Timing")
		if has != on {
			t.Fatalf("--show-trace-timing %v: table shown %v\n%s", on, has, stdout)
		}
		if on {
			table := stdout[strings.Index(stdout, "HTTP Trace Timing"):]
			for _, want := range []string{"HTTP Request Waiting (ms)", "HTTP Request Receiving (ms)", "HTTP Request Duration (ms)"} {
				if !strings.Contains(table, want) {
					t.Errorf("trace table lacks %q:\n%s", want, table)
				}
			}
		}
	}
}
