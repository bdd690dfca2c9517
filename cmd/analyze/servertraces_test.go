package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	st "github.com/llmbench/llmbench/analyze/servertime/servertimetest"
)

// TestServerTraces runs analyze --server-traces on a run whose server's spans a Collector
// wrote: the join's line, gates on the server metrics (one holds, one fails), the metrics
// in the JSON export, the time slices and Parquet; a traces file that cannot be read is bad
// input named in one line.
func TestServerTraces(t *testing.T) {
	f := st.New(12)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.Write(t, dir)
	traces := filepath.Join(t.TempDir(), "traces.json")
	st.WriteCollectorFile(t, traces, f.Spans(map[int]bool{4: true}, 3))

	var out, errb bytes.Buffer
	code := run([]string{"--server-traces", traces, "--tokenizer", "builtin", "--no-html", "--slice-duration", "0.2", "--export", "parquet",
		"--gate", "server_queue_time.p99<45", "--gate", "ttft_outside_server.max<=3", dir}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"Server Queue Time (ms)",
		"Server traces: 15 spans read from " + traces + " (otlp-json): 12 matched to this run's requests, 3 unmatched; 11 valid requests joined, 1 without a span",
		"Gate server_queue_time.p99<45: PASS",
		"Gate ttft_outside_server.max<=3: PASS",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	for file, want := range map[string]string{
		"profile_export_aiperf.json":            `"server_queue_time": {`,
		"profile_export_aiperf_timeslices.json": `"server_queue_time"`,
		"profile_export.jsonl":                  `"server_span":{"name":"llm_request"`,
		"requests.parquet":                      "server_queue_ms",
	} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %q (%v)", file, want, err)
		}
	}

	out.Reset()
	errb.Reset()
	if code := run([]string{"--server-traces", traces, "--tokenizer", "builtin", "--no-html", "--gate", "server_queue_time.p99<10", dir}, &out, &errb); code != 1 ||
		!strings.Contains(out.String(), "Gate server_queue_time.p99<10: FAIL") {
		t.Fatalf("a failing server gate: exit %d\n%s", code, out.String())
	}

	// --where on a server metric: requests 3, 8 (30 ms queued) and 9 (40 ms) of the 11 joined.
	out.Reset()
	if code := run([]string{"--server-traces", traces, "--tokenizer", "builtin", "--no-html", "--where", "server_queue_time > 25",
		"--output-dir", filepath.Join(t.TempDir(), "sel"), dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Server Queue Time") ||
		!regexp.MustCompile(`Request Count\s+3\.00`).MatchString(out.String()) {
		t.Fatalf("--where on a server metric: exit %d\n%s", code, out.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("{\"resourceSpans\":[]}\n{\"format_version\":9,\"traces\":{}}\n"), 0o644)
	errb.Reset()
	if code := run([]string{"--server-traces", bad, "--tokenizer", "builtin", "--no-html", dir}, &out, &errb); code != 2 ||
		strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "bad.json:2: ") {
		t.Fatalf("a bad traces file: exit %d, stderr %q", code, errb.String())
	}
}

// TestCompareServerTraces: analyze compare joins each run to its own server_traces.jsonl
// and compares the server metrics: the candidate's queue, 50 ms longer, is a regression.
func TestCompareServerTraces(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, extraQueue int64) string {
		f := st.New(30)
		for i := range f.Queue {
			f.Queue[i] += extraQueue
		}
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f.Write(t, dir)
		st.WriteRunFile(t, dir, f.Spans(nil, 0))
		return dir
	}
	base, cand := mk("base", 0), mk("slow-queue", 50_000_000)
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCmd("compare", "--output-dir", out, "--fail-on-regression", "server_queue_time:10", base, cand)
	if code != 1 || !strings.Contains(stderr, "server_queue_time") || !strings.Contains(stdout, "server_queue_time") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
