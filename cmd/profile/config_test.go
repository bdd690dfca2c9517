package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/redact"
)

// profileArgs runs profile with exactly args (plus the artifact folder) in a fresh folder.
func profileArgs(t *testing.T, env map[string]string, args ...string) profileRun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "artifacts")
	var out, errb bytes.Buffer
	code := run(append([]string{"profile", "--artifact-dir", dir}, args...), &out, &errb, func(k string) string { return env[k] })
	return profileRun{code, out.String(), errb.String(), dir}
}

// planOf returns the plan file of the one run under r.dir and its SHA-256.
func planOf(t *testing.T, r profileRun) (*mmapds.Plan, [32]byte) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(r.dir, "*", profile.PlanFile))
	if err != nil || len(m) != 1 {
		t.Fatalf("plans under %s: %v %v\nstderr:\n%s", r.dir, m, err, r.stderr)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := mmapds.Open(m[0], mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, sha256.Sum256(b)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// quick is a small run's flags against url: every one a plan, replay or analyze flag.
func quick(url string) []string {
	return []string{"--model", "m", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming", "--url", url,
		"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "3", "--extra-inputs", "ignore_eos:true", "--ui-type", "none",
		"--max-schedule-lag", "10s", "--max-worker-cpu", "100000", "--workers", "1", "--no-pin", "--request-count", "6",
		"--concurrency", "2", "--warmup-request-count", "2", "-H", "X-Test: a b", "--goodput", "time_to_first_token:1000"}
}

// TestPrintConfigCompilesTheSamePlan: --print-config writes the effective configuration,
// and running from it (--config) compiles a plan byte for byte the plan the flags compile.
func TestPrintConfigCompilesTheSamePlan(t *testing.T) {
	url := faultServer(t, func(int64) bool { return false })
	direct := profileArgs(t, nil, quick(url)...)
	if direct.code != 0 {
		t.Fatalf("flags: exit %d\n%s", direct.code, direct.stderr)
	}
	printed := profileArgs(t, nil, append(quick(url), "--print-config")...)
	if printed.code != 0 || !strings.Contains(printed.stdout, "concurrency: 2\n") {
		t.Fatalf("--print-config: exit %d\n%s%s", printed.code, printed.stdout, printed.stderr)
	}
	if _, err := os.Stat(printed.dir); err == nil {
		t.Errorf("--print-config made an artifact directory")
	}
	cfg := writeFile(t, "effective.yaml", printed.stdout)
	fromFile := profileArgs(t, nil, "--config", cfg)
	if fromFile.code != 0 {
		t.Fatalf("--config: exit %d\n%s", fromFile.code, fromFile.stderr)
	}
	_, a := planOf(t, direct)
	_, b := planOf(t, fromFile)
	if a != b {
		t.Fatalf("the plan from --config %x differs from the plan from the flags %x", b, a)
	}
	// And the config file read back prints itself (but for the artifact folder, which each
	// profileArgs gives on the command line).
	again := profileArgs(t, nil, "--config", cfg, "--print-config")
	dropDir := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "artifact-dir:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if dropDir(again.stdout) != dropDir(printed.stdout) {
		t.Errorf("--print-config of the printed config differs:\n%s\nwant:\n%s", again.stdout, printed.stdout)
	}
}

// TestConfigCommandLineWins: a flag on the command line wins over the file's key; the file's
// other keys apply; -f is --config.
func TestConfigCommandLineWins(t *testing.T) {
	url := faultServer(t, func(int64) bool { return false })
	cfg := writeFile(t, "c.yaml", "model: m\ntokenizer: builtin\nstreaming: true\nurl: ["+url+"]\nconcurrency: 4\nrequest_count: 6\n"+
		"isl: 16\nosl: 3\nextra-inputs: {ignore_eos: true}\nui-type: none\nmax-schedule-lag: 10s\nmax-worker-cpu: 100000\nworkers: 1\nno-pin: true\n")
	r := profileArgs(t, nil, "-f", cfg, "--concurrency", "2")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	p, _ := planOf(t, r)
	if m := p.Meta(); m.Concurrency != 2 || m.ProfileCount != 6 {
		t.Errorf("concurrency %d, %d requests: want 2 (the command line's) and 6 (the file's)", m.Concurrency, m.ProfileCount)
	}
	if !strings.Contains(r.stderr, "m-openai-chat-concurrency2") {
		t.Errorf("artifact directory not named by the command line's concurrency:\n%s", r.stderr)
	}
}

// TestAIPerfV2ConfigRuns: an AIPerf config v2 file (schemaVersion "2.0", a benchmark: body,
// camelCase and snake_case keys, a duration string, ${VAR:default}) runs, each key meaning
// what the flag it maps onto means.
func TestAIPerfV2ConfigRuns(t *testing.T) {
	url := faultServer(t, func(int64) bool { return false })
	cfg := writeFile(t, "benchmark.yaml", `schemaVersion: "2.0"
randomSeed: 7
benchmark:
  model: ${MODEL:mock-model}
  endpoint:
    url: `+url+`
    type: chat
    streaming: true
    timeout: 2m
    extra: {ignore_eos: true}
  tokenizer: {name: builtin}
  dataset:
    type: synthetic
    entries: 20
    prompts: {isl: {mean: 16, stddev: 0}, osl: 3}
  phases:
    - {name: warmup, type: concurrency, concurrency: 1, requests: 2, exclude_from_results: true}
    - {name: profiling, type: concurrency, concurrency: 2, requests: 6}
`)
	r := profileArgs(t, map[string]string{"MODEL": "m"}, "--config", cfg, "--ui-type", "none", "--max-schedule-lag", "10s",
		"--max-worker-cpu", "100000", "--workers", "1", "--no-pin")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	p, _ := planOf(t, r)
	m := p.Meta()
	if m.Model != "m" || m.Concurrency != 2 || m.WarmupConcurrency != 1 || m.WarmupCount != 2 || m.ProfileCount != 6 || !m.Streaming || m.Seed != 7 {
		t.Errorf("meta: model %q concurrency %d warmup concurrency %d, %d+%d records, streaming %v, seed %d",
			m.Model, m.Concurrency, m.WarmupConcurrency, m.WarmupCount, m.ProfileCount, m.Streaming, m.Seed)
	}
	if got := m.Spec["request-timeout-seconds"]; got != nil {
		t.Logf("spec request-timeout-seconds %v", got)
	}
}

// TestConfigErrors: bad config files are one line naming the file, the line and the key,
// exit 2, with nothing made or sent.
func TestConfigErrors(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"unknown flag key", "model: m\nconcurency: 4\n", `line 2: unknown key "concurency": no such flag (did you mean concurrency?)`},
		{"duplicate", "model: m\nisl: 4\nsynthetic-input-tokens-mean: 5\n", `line 3: "synthetic-input-tokens-mean" sets --synthetic-input-tokens-mean again (line 2 set it first)`},
		{"bad value", "model: m\nconcurrency: many\n", "line 2: concurrency: --concurrency \"many\""},
		{"not yaml", "model: [m\n", "not YAML"},
		{"not a mapping", "- m\n", "line 1: want a mapping of keys to values"},
		{"empty", "", "the file is empty"},
		{"env unset", "model: ${NOPE}\n", "line 1: environment variable NOPE is not set"},
		{"computed", "model: m\nconcurrency: \"{{ 2 * 4 }}\"\n", "line 2: computed values ({{ ... }}) are not supported"},
		{"other schema", "schemaVersion: \"3.0\"\n", `line 1: schemaVersion: only AIPerf's config v2 ("2.0") is read`},
		{"v2 unknown key", "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpont: {url: x}\n", "line 4: unknown key benchmark.endpont (this tool reads:"},
		{"v2 unsupported section", "schemaVersion: \"2.0\"\nplot: {}\n", "line 2: unknown key plot"},
		{"v2 deep key", "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    url: http://x\n    retries: 3\n", "line 6: unknown key benchmark.endpoint.retries"},
		{"v2 two profiling phases", "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  phases:\n    - {name: profiling, requests: 2}\n    - {name: more, kind: profiling, requests: 2}\n",
			"line 6: phases: one profiling phase here (line 5 is one already)"},
		{"v2 public dataset", "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  dataset: {type: public}\n", "line 4: dataset.type public"},
		{"v2 bad duration", "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  phases: {duration: soon}\n", `line 4: phases.profiling.duration "soon"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeFile(t, "bad.yaml", c.text)
			r := profileArgs(t, nil, "--config", cfg, "--url", "http://127.0.0.1:9")
			if r.code != 2 || !strings.Contains(r.stderr, "--config "+cfg) || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and ~ %q", r.code, r.stderr, c.want)
			}
			if strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("want one line:\n%s", r.stderr)
			}
			if _, err := os.Stat(r.dir); err == nil {
				t.Errorf("bad config left an artifact directory")
			}
		})
	}
	if r := profileArgs(t, nil, "--config", filepath.Join(t.TempDir(), "missing.yaml")); r.code != 2 || !strings.Contains(r.stderr, "--config: open") {
		t.Errorf("missing file: exit %d %q", r.code, r.stderr)
	}
}

// TestPrintConfigRedactsValuesOnly: the printed configuration, through the writer main
// gives it, hides a secret query parameter's value and a secret key=value pair's value, and
// keeps every other parameter (Azure's api-version) and pair, so --config of it targets the
// same URL.
func TestPrintConfigRedactsValuesOnly(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"profile", "--model", "m", "--print-config",
		"--url", "http://h/v1?a=1&api_key=sk-X&b=2", "--url", "http://h2/v1?api-key=sk-abcdefghijkl&api-version=2024-06-01",
		"--otel-url", "http://127.0.0.1:1", "--otel-resource-attributes", "api_key=sk-otel-abcdefgh,service.name=x"},
		redact.NewWriter(&out), redact.NewWriter(&errb), func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"http://h/v1?a=1&api_key=REDACTED&b=2", "http://h2/v1?api-key=REDACTED&api-version=2024-06-01",
		"- api_key=REDACTED", "- service.name=x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out.String())
		}
	}
	for _, secret := range []string{"sk-X", "sk-abcdefghijkl", "sk-otel-abcdefgh"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("--print-config holds %q", secret)
		}
	}
}
