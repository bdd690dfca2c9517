package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/version"
)

// TestVersionEverywhere: every command's --version, plan inspect's tool, run.json and the
// exports carry one version: llmbench's semantic version (version.Number), with the same
// commit wherever the build knows it.
func TestVersionEverywhere(t *testing.T) {
	var want string
	for _, c := range []struct{ name, path string }{{"plan", bin.plan}, {"replay", bin.replay}, {"analyze", bin.analyze},
		{"profile", bin.profile}, {"chat", bin.chat}, {"mockllm", bin.mockllm}} {
		r := command(t, c.path, "--version")
		got, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), c.name+" ")
		if r.code != 0 || !ok || !strings.HasPrefix(got, version.Number) {
			t.Fatalf("%s --version: exit %d, %q; want %q and %s...", c.name, r.code, r.stdout, c.name+" ", version.Number)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("%s --version says %q, plan said %q", c.name, got, want)
		}
	}
	dir := t.TempDir()
	srv := startMock(t, "--ttft", "1ms", "--itl", "1ms")
	planPath := compile(t, dir, "--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--isl", "16", "--osl", "4", "--concurrency", "1", "--request-count", "4")
	in := command(t, bin.plan, "inspect", planPath)
	if !strings.Contains(in.stdout, "tool       llmbench-plan "+version.Number+"\n") {
		t.Errorf("plan inspect does not name version %s:\n%s", version.Number, in.stdout)
	}
	run := replayPlan(t, dir, planPath, []string{srv.URL})
	out := filepath.Join(dir, "out")
	analyzeRun(t, run, out, "--accept-schedule-miss") // only the version is judged here
	for _, f := range []string{filepath.Join(run, "run.json"), filepath.Join(out, "profile_export_aiperf.json")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ToolVersion string `json:"tool_version"`
			LLMBench    struct {
				ToolVersion string `json:"tool_version"`
			} `json:"llmbench"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if v := doc.ToolVersion + doc.LLMBench.ToolVersion; v != want {
			t.Errorf("%s: tool_version %q, --version %q", f, v, want)
		}
	}
}

// TestExitCodeContract: docs/exit-codes.md's table, command by command: 0 when everything
// held, 1 when the run or a check failed, 2 on bad input before anything was sent (one line
// on stderr), and --help, --help-all and --version 0.
func TestExitCodeContract(t *testing.T) {
	dir := t.TempDir()
	srv := startMock(t, "--ttft", "1ms", "--itl", "1ms")
	planPath := compile(t, dir, "--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--isl", "16", "--osl", "4", "--concurrency", "1", "--request-count", "6")
	run := replayPlan(t, dir, planPath, []string{srv.URL})
	run2 := replayInto(t, filepath.Join(dir, "run2"), planPath, []string{srv.URL})
	// A run with failed requests (half answered HTTP 500): compare fails it.
	failing := startMock(t, "--ttft", "1ms", "--itl", "1ms", "--error-rate", "0.5", "--seed", "3")
	run3 := filepath.Join(dir, "run3")
	command(t, bin.replay, "--plan", planPath, "--url", failing.URL, "--output-dir", run3, "--no-pin", "--no-gpu-telemetry", "--no-preflight")
	dead := "http://" + freeAddr(t) // nothing listens there
	p := func(name string) string { return filepath.Join(dir, name) }
	profile := []string{"--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming", "--url", srv.URL,
		"--isl", "16", "--osl", "4", "--request-count", "6", "--no-gpu-telemetry", "--ui-type", "none"}
	cases := []struct {
		name string
		cmd  string
		args []string
		want int
	}{
		{"plan ok", bin.plan, []string{"--model", "m", "--tokenizer", "builtin", "--request-count", "2", "-o", p("ok.plan")}, 0},
		{"plan bad flag", bin.plan, []string{"--model", "m", "--request-count", "-2", "-o", p("bad.plan")}, 2},
		{"replay ok", bin.replay, []string{"--plan", planPath, "--url", srv.URL, "--output-dir", p("r-ok"), "--no-pin", "--no-gpu-telemetry"}, 0},
		{"replay bad flag", bin.replay, []string{"--plan", planPath, "--url", srv.URL, "--output-dir", p("r-bad"), "--workers", "x"}, 2},
		{"analyze ok", bin.analyze, []string{"--output-dir", p("a-ok"), "--gate", "request_latency.p99<60000", run}, 0},
		{"analyze gate fails", bin.analyze, []string{"--output-dir", p("a-gate"), "--gate", "time_to_first_token.p99<0.001", run}, 1},
		{"analyze bad gate", bin.analyze, []string{"--output-dir", p("a-bad"), "--gate", "ttft.p99<1", run}, 2},
		{"compare ok", bin.analyze, []string{"compare", "--output-dir", p("c-ok"), "--no-html", run, run2}, 0},
		{"compare a failed run", bin.analyze, []string{"compare", "--output-dir", p("c-fail"), "--no-html", run, run3}, 1},
		{"compare bad input", bin.analyze, []string{"compare", "--output-dir", p("c-bad"), run}, 2},
		{"profile ok", bin.profile, append([]string{"--artifact-dir", p("pr-ok"), "--concurrency", "1"}, profile...), 0},
		{"profile gate fails", bin.profile, append([]string{"--artifact-dir", p("pr-gate"), "--concurrency", "1", "--gate", "time_to_first_token.p99<0.001"}, profile...), 1},
		{"profile sweep gate fails", bin.profile, append([]string{"--artifact-dir", p("pr-sweep"), "--gate", "time_to_first_token.p99<0.001"}, append([]string{"--concurrency", "1,2"}, profile...)...), 1},
		{"profile bad flag", bin.profile, append(append([]string{"--artifact-dir", p("pr-bad")}, profile...), "--request-count", "-1"), 2},
		{"chat ok", bin.chat, []string{"--model", "mock", "--tokenizer", "builtin", "--url", srv.URL, "--quick", "hi"}, 0},
		{"chat turn fails", bin.chat, []string{"--model", "mock", "--tokenizer", "builtin", "--url", dead, "--quick", "hi"}, 1},
		{"chat bad flag", bin.chat, []string{"--url", srv.URL, "--quick"}, 2},
	}
	for _, c := range []struct{ name, path string }{{"plan", bin.plan}, {"replay", bin.replay}, {"analyze", bin.analyze}, {"profile", bin.profile}, {"chat", bin.chat}} {
		for _, a := range []string{"--help", "--help-all", "--version"} {
			cases = append(cases, struct {
				name string
				cmd  string
				args []string
				want int
			}{c.name + " " + a, c.path, []string{a}, 0})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := command(t, c.cmd, c.args...)
			if r.code != c.want {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.want, r.stdout, r.stderr)
			}
			if c.want == 2 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("bad input must be one line on stderr, got:\n%s", r.stderr)
			}
		})
	}
}

// TestDemoLastLine: make demo's script (scripts/demo.sh) validates the generator, needs no
// curl, and ends with one line a newcomer reads: the measured TTFT and ITL beside the mock's
// true 20 ms and 5 ms and what the client added; its exit status agrees with that line.
func TestDemoLastLine(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^[^#]*\bcurl\b`).Match(src) { // a command, not a comment
		t.Error("scripts/demo.sh uses curl: the README promises the demo needs nothing but the build")
	}
	_, port, _ := strings.Cut(freeAddr(t), ":")
	r := command(t, "bash", script, filepath.Dir(bin.plan), filepath.Join(t.TempDir(), "demo"), port)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	last := lines[len(lines)-1]
	re := regexp.MustCompile(`^demo: measured TTFT p50 [0-9.]+ ms and ITL p50 [0-9.]+ ms against the mock's true 20 ms and 5 ms: the client and loopback added -?[0-9.]+ ms and -?[0-9.]+ ms; (every check held|a check failed \(see above\))$`)
	if !re.MatchString(last) {
		t.Fatalf("last line %q\nstdout:\n%s\nstderr:\n%s", last, r.stdout, r.stderr)
	}
	if held := strings.HasSuffix(last, "every check held"); held != (r.code == 0) {
		t.Errorf("exit %d, but the last line says %q", r.code, last)
	}
	if !strings.Contains(r.stderr, "generator validation") {
		t.Errorf("the demo did not validate the generator:\n%s", r.stderr)
	}
}
