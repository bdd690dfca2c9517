package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/tokenizer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/plan")

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.plan")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--model", "m", "--isl", "0", "-o", out}, "plan: --synthetic-input-tokens-mean must be > 0 (got 0)"},
		{[]string{"--model", "m", "--synthetic-input-tokens-mean", "-3", "-o", out}, "--synthetic-input-tokens-mean -3: want tokens in [0, 16777216]"},
		{[]string{"--model", "m", "--request-rate", "5", "--fixed-schedule", "-o", out}, "--request-rate and --fixed-schedule are mutually exclusive"},
		{[]string{"--model", "m", "--request-rate", "5", "--arrival-pattern", "bursty", "-o", out}, `--arrival-pattern must be constant, poisson or gamma (got "bursty")`},
		{[]string{"--model", "m", "--request-rate-mode", "wave", "-o", out}, "--arrival-pattern must be"},
		{[]string{"--model", "m", "--no-such-flag", "-o", out}, "unknown flag: --no-such-flag"},
		{[]string{"--model", "m", "--concurrency", "many", "-o", out}, `invalid argument "many"`},
		{[]string{"--model", "m", "--concurrency", "-2", "-o", out}, "--concurrency -2: want sessions in [0, 1048576]"},
		{[]string{"--model", "m"}, "--output is required"},
		{[]string{"-o", out}, "--model is required"},
		{[]string{"--model", "m", "--endpoint-type", "soap", "-o", out}, "--endpoint-type must be one of"},
		{[]string{"--model", "m", "--extra-inputs", "novalue", "-o", out}, `--extra-inputs "novalue": want key:value`},
		{[]string{"--model", "m", "--request-count", "99999999999999", "-o", out}, "--request-count 99999999999999: want requests in [0, 16777216]"},
		{[]string{"--model", "m", "--request-rate", "1000", "--benchmark-duration", "86400", "-o", out}, "plans 86400000 requests, more than the maximum"},
		{[]string{"--model", "m", "--extra-inputs", "{bad", "-o", out}, "invalid JSON object"},
		{[]string{"--model", "m", "--public-dataset", "sharegpt", "-o", out}, "--public-dataset sharegpt"},
		{[]string{"--model", "m", "--custom-dataset-type", "mooncake_trace", "-o", out}, "--custom-dataset-type needs --input-file"},
		{[]string{"--model", "m", "--input-file", filepath.Join(dir, "missing.jsonl"), "-o", out}, "missing.jsonl"},
		{[]string{"--model", "m", "--tokenizer", filepath.Join(dir, "nope.json"), "-o", out}, "--tokenizer"},
		{[]string{"--model", "m", "--dataset-sampling-strategy", "lottery", "-o", out}, "--dataset-sampling-strategy must be"},
		{[]string{"--model", "m", "--random-range-ratio", "2", "-o", out}, "--random-range-ratio 2: want [0, 1]"},
		{[]string{"--model", "m", "--seq-dist", "128,64:50", "-o", out}, "sum to 100"},
		{[]string{"--model", "m", "--conversation-history", "none", "-o", out}, "--conversation-history must be compiled or live"},
		{[]string{"--model", "m", "--user-centric-rate", "2", "-o", out}, "--user-centric-rate needs --num-users"},
		{[]string{"--model", "m", "--request-count", "5", "--num-sessions", "5", "-o", out}, "mutually exclusive"},
		{[]string{"--model", "m", "--fixed-schedule", "-o", out}, "--fixed-schedule needs an --input-file"},
		{[]string{"--model", "m", "--endpoint-type", "embeddings", "--streaming", "-o", out}, "does not stream"},
		{[]string{"--model", "m", "-o", out, "extra"}, `unexpected argument "extra"`},
		{[]string{"--model", "m", "--benchmark-duration", "-1", "-o", out}, "--benchmark-duration -1: want seconds in [0, 31536000]"},
		{[]string{"--endpoint-type", "template", "--custom-endpoint", "/x", "-o", out}, "--payload-template is required for --endpoint-type template"},
		{[]string{"--endpoint-type", "template", "--custom-endpoint", "/x", "--payload-template", "@" + filepath.Join(dir, "none.tmpl"), "-o", out}, "--payload-template: open"},
		{[]string{"--endpoint-type", "template", "--custom-endpoint", "/x", "--payload-template", `{"a":1}`, "--extra-inputs", `payload_template:{"b":2}`, "-o", out}, "--payload-template and --extra-inputs payload_template are both given"},
		{[]string{"--endpoint-type", "raw", "--custom-endpoint", "/x", "--extra-inputs", "response_field:7", "-o", out}, "--extra-inputs response_field: want a string"},
		{[]string{"--model", "m", "--response-field", "choices.0.text", "-o", out}, "--response-field applies to --endpoint-type raw and template only (got chat)"},
		{[]string{"--model", "m", "--payload-template", `{"a":1}`, "-o", out}, "--payload-template applies to --endpoint-type template only (got chat)"},
		{[]string{"--model", "m", "--cache-bust", "first_turn_prefix", "-o", out}, "apply to agentic inputs"},
		{[]string{"--model", "m", "--trajectory-start-max-ratio", "2", "-o", out}, "--trajectory-start-max-ratio 2: want [0, 1]"},
		{[]string{"--model", "m", "--input-file", badWeka(t, dir), "-o", out}, `requests[0].requests[0]: unknown field "colour"`},
		{[]string{"--model", "m", "--input-file", agentic("dag_branching.jsonl"), "--conversation-history", "compiled", "-o", out}, "use --conversation-history live"},
		{[]string{"--model", "m", "--input-file", agentic("dag_branching.jsonl"), "--trajectory-start-max-ratio", "1", "-o", out}, "need a timed agentic input"},
		{[]string{"--model", "m", "--input-file", agentic("mooncake_small.jsonl"), "--trace-idle-gap-cap-seconds", "5", "-o", out}, "--trace-idle-gap-cap-seconds applies to weka_trace"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "plan: ") || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed compile left a plan file")
	}
}

// agentic is a file of the shared test data.
func agentic(name string) string { return filepath.Join("..", "..", "testdata", "dataset", name) }

// badWeka writes a weka trace with an unknown member in a nested request.
func badWeka(t *testing.T, dir string) string {
	p := filepath.Join(dir, "bad.json")
	os.WriteFile(p, []byte(`{"id": "x", "models": [], "block_size": 16, "hash_id_scope": "local", "requests": [`+
		`{"t": 0, "type": "subagent", "agent_id": "a", "subagent_type": "x", "status": "completed", "models": [], "requests": [`+
		`{"t": 0, "type": "n", "model": "m", "in": 5, "out": 1, "colour": 2}]}]}`), 0o644)
	return p
}

// plan inspect of a weka folder: every node, its session, agent, turn, ISL/OSL, reuse, when
// it may go and the parents it waits for, agents nested under their parents (golden).
func TestInspectAgenticGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "weka.plan")
	if code, _, stderr := runCmd(t, "--model", "mock", "--input-file", agentic("weka"), "--random-seed", "7", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(t, "inspect", out)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	_, graph, ok := strings.Cut(stdout, "\nagents:\n")
	if !ok {
		t.Fatalf("no agents section:\n%s", stdout)
	}
	path := filepath.Join("testdata", "plan", "inspect_weka.golden")
	if *update {
		if err := os.WriteFile(path, []byte(graph), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if graph != string(want) {
		t.Errorf("inspect_weka.golden differs (go test -update rewrites it):\n%s", graph)
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.plan")
	os.WriteFile(bad, []byte("LLMPLAN\x00 this is not a plan"), 0o644)
	for _, args := range [][]string{
		{"inspect"},
		{"inspect", bad},
		{"inspect", filepath.Join(dir, "missing.plan")},
		{"inspect", "--requests", "-5", bad},
		{"inspect", "--bogus", bad},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "plan: ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// demoArgs are the flags scripts/demo.sh uses.
func demoArgs(out string) []string {
	return []string{"--model", "mock", "--endpoint-type", "chat", "--streaming", "--isl", "128", "--osl", "128",
		"--extra-inputs", "ignore_eos:true", "--concurrency", "8", "--request-count", "64", "--warmup-request-count", "4", "-o", out}
}

type inspectJSON struct {
	Hash         string         `json:"hash"`
	RequestCount int            `json:"request_count"`
	Spec         map[string]any `json:"spec"`
	Requests     []struct {
		Index        int             `json:"index"`
		Phase        string          `json:"phase"`
		Session      int             `json:"session"`
		Turn         int             `json:"turn"`
		SendOffsetNs *int64          `json:"send_offset_ns"`
		ISL          int             `json:"isl"`
		OSL          int             `json:"osl"`
		Body         json.RawMessage `json:"body"`
	} `json:"requests"`
}

func inspect(t *testing.T, args ...string) inspectJSON {
	t.Helper()
	code, stdout, stderr := runCmd(t, append([]string{"inspect", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("inspect %q: exit %d: %s", args, code, stderr)
	}
	var v inspectJSON
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("inspect --json output: %v\n%s", err, stdout)
	}
	return v
}

func TestDemoPlanAndIdentity(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.plan"), filepath.Join(dir, "b.plan"), filepath.Join(dir, "c.plan")
	for _, out := range []string{a, b} {
		if code, _, stderr := runCmd(t, demoArgs(out)...); code != 0 {
			t.Fatalf("demo compile: exit %d: %s", code, stderr)
		}
	}
	if code, _, stderr := runCmd(t, append(demoArgs(c), "--random-seed", "9")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ja, jb, jc := inspect(t, a), inspect(t, b), inspect(t, c)
	if ja.Hash != jb.Hash || len(ja.Hash) != 64 {
		t.Fatalf("same flags, different hashes: %s %s", ja.Hash, jb.Hash)
	}
	if ja.Hash == jc.Hash {
		t.Fatal("a different seed gave the same hash")
	}
	if ja.RequestCount != 68 || ja.Spec["concurrency"] != float64(8) || ja.Spec["streaming"] != true {
		t.Fatalf("request_count %d spec %v", ja.RequestCount, ja.Spec)
	}
	if _, ok := ja.Spec["output"]; ok {
		t.Fatal("the output path is in the spec")
	}
}

// TestEveryPromptRetokenizes checks, through the CLI, that the text of every body (all
// messages joined by a space) encodes to the recorded ISL.
func TestEveryPromptRetokenizes(t *testing.T) {
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := [][]string{
		{"--isl", "100", "--isl-stddev", "30", "--osl", "20", "--request-count", "40"},
		{"--endpoint-type", "completions", "--isl", "64", "--request-count", "20", "--random-range-ratio", "0.5"},
		{"--isl", "40", "--osl", "10", "--conversation-turn-mean", "3", "--shared-system-prompt-length", "12",
			"--user-context-prompt-length", "8", "--num-sessions", "10", "--request-rate", "5", "--extra-inputs", "min_tokens:10"},
	}
	for i, args := range cases {
		out := filepath.Join(dir, "p.plan")
		if code, _, stderr := runCmd(t, append([]string{"--model", "m", "-o", out}, args...)...); code != 0 {
			t.Fatalf("case %d: exit %d: %s", i, code, stderr)
		}
		v := inspect(t, "--requests", "-1", out)
		if len(v.Requests) != v.RequestCount || v.RequestCount == 0 {
			t.Fatalf("case %d: %d of %d requests shown", i, len(v.Requests), v.RequestCount)
		}
		for _, r := range v.Requests {
			var body struct {
				Messages []struct{ Content string }
				Prompt   *string
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			text := ""
			if body.Prompt != nil {
				text = *body.Prompt
			} else {
				var parts []string
				for _, m := range body.Messages {
					parts = append(parts, m.Content)
				}
				text = strings.Join(parts, " ")
			}
			if got := tok.Count(text); got != r.ISL {
				t.Fatalf("case %d request %d: text has %d tokens, isl %d", i, r.Index, got, r.ISL)
			}
		}
	}
}

func TestInspectGolden(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "golden.plan")
	args := []string{"--model", "mock", "--streaming", "--isl", "12", "--osl", "6", "--num-dataset-entries", "3",
		"--request-rate", "10", "--arrival-pattern", "constant", "--request-count", "3", "--warmup-request-count", "1",
		"--extra-inputs", "ignore_eos:true", "--random-seed", "42", "-o", out}
	if code, _, stderr := runCmd(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, g := range []struct {
		name string
		args []string
	}{
		{"inspect_json.golden", []string{"inspect", "--json", "--requests", "4", out}},
		{"inspect_text.golden", []string{"inspect", "--requests", "2", out}},
	} {
		code, stdout, stderr := runCmd(t, g.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", g.args, code, stderr)
		}
		path := filepath.Join("testdata", "plan", g.name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if stdout != string(want) {
			t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", g.name, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCmd(t, "--help")
	if code != 0 || !strings.Contains(stdout, "--request-rate") || !strings.Contains(stdout, "plan inspect") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
}

// TestTemplateFlags: AIPerf's way (--extra-inputs payload_template:FILE and response_field:...)
// gives the same bodies as the flags, keeps both keys out of the bodies, and records the
// response field in the spec under the flag's name, where analyze reads it.
func TestTemplateFlags(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "body.tmpl")
	src := `{"model":{{json .Model}},"inputs":{{json .Prompt}},"max_new_tokens":{{.MaxTokens}},"extra":{{json .Extra}}}`
	if err := os.WriteFile(tmpl, []byte(src+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--model", "mock", "--endpoint-type", "template", "--custom-endpoint", "/gen", "--isl", "16", "--osl", "8",
		"--request-count", "3", "--extra-inputs", "ignore_eos:true"}
	a, b, c := filepath.Join(dir, "a.plan"), filepath.Join(dir, "b.plan"), filepath.Join(dir, "c.plan")
	runs := [][]string{
		append(append([]string{}, base...), "--payload-template", "@"+tmpl, "--response-field", "generated_text", "-o", a),
		append(append([]string{}, base...), "--extra-inputs", "payload_template:"+tmpl, "--extra-inputs", "response_field:generated_text", "-o", b),
		append(append([]string{}, base...), "--payload-template", src, "--response-field", "generated_text", "-o", c),
	}
	for _, args := range runs {
		if code, _, stderr := runCmd(t, args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	ja, jb, jc := inspect(t, "--requests", "3", a), inspect(t, "--requests", "3", b), inspect(t, "--requests", "3", c)
	for _, j := range []inspectJSON{ja, jb, jc} {
		if j.Spec["response-field"] != "generated_text" || len(j.Requests) != 3 {
			t.Fatalf("spec response-field %v, %d requests", j.Spec["response-field"], len(j.Requests))
		}
	}
	for i := range ja.Requests {
		ba, bb, bc := compact(t, ja.Requests[i].Body), compact(t, jb.Requests[i].Body), compact(t, jc.Requests[i].Body)
		if ba != bb || ba != bc {
			t.Fatalf("request %d bodies differ:\n%s\n%s\n%s", i, ba, bb, bc)
		}
		if !strings.Contains(ba, `"max_new_tokens":8,"extra":{"ignore_eos":true}}`) || strings.Contains(ba, "payload_template") || strings.Contains(ba, "response_field") {
			t.Fatalf("request %d body %s", i, ba)
		}
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
