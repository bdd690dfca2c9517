package e2e_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// Workload of every endpoint run: small enough that the whole package stays well under a
// minute, large enough that medians are stable (16 requests, 32 tokens out). Timed runs keep
// 4 in flight behind one warmup round (first connections are not measured); the others put
// all 16 in two rounds of 8.
const (
	nRequests        = 16
	osl              = 32
	isl              = 64
	timedConcurrency = 4
	timedWarmup      = 4
	otherConcurrency = 8
)

// The server's timing (mockllm docs: a token event is due TTFT + j·ITL after arrival; the
// client adds loopback and scheduling latency, never less). Timing is checked against the
// server's schedule log for the same requests (timing_test.go).
var mockTiming = []string{"--ttft", "20ms", "--itl", "5ms", "--seed", "1"}

// Embeddings, rankings and image bodies come at TTFT: no client can see them sooner.
const listLatencyMs = 20

// chatTemplate is a template-endpoint body for the chat route: prompt, model, max tokens and
// streaming from the plan, --extra-inputs through .Extra.
const chatTemplate = `{"model":{{json .Model}},"messages":[{"role":"user","content":{{json .Prompt}}}],` +
	`"max_tokens":{{.MaxTokens}},"stream":{{.Streaming}}` +
	`{{if .Streaming}},"stream_options":{"include_usage":true}{{end}}` +
	`{{range $k, $v := .Extra}},{{json $k}}:{{json $v}}{{end}}}`

// endpointCase is one plan of the table: an endpoint type, streaming or not.
type endpointCase struct {
	name      string
	typ       string
	args      []string // plan flags besides the workload's
	streaming bool
	// tokens: the type produces tokens, so token metrics must be there (and, streamed, match
	// mockllm's timing); otherwise they must be omitted and items counted.
	tokens bool
	items  int // items per response of a non-token type
	// serverTokens: the response carries a usage object, so --use-server-token-count must
	// give the client's counts.
	serverTokens bool
	synthetic    bool // synthetic prompts (ISL fixed by --isl)
	// timed: a streamed text type whose TTFT and ITL are checked against the
	// server's schedule log; its replay runs alone so that runs sharing the server stay
	// apart in time.
	timed bool
	// toolCalls: every answer is a tool call whose name comes as one multi-token event, so
	// the per-request ITL is 30 gaps over OSL − 1 = 31 tokens (AIPerf's definition) and is
	// not compared with the server's ITL.
	toolCalls bool
}

func endpointCases(t *testing.T) []endpointCase {
	rankings := []string{"--input-file", testdata(t, "rankings.jsonl"), "--custom-dataset-type", "single_turn"}
	raw := func(file string) []string {
		return []string{"--input-file", testdata(t, file), "--custom-dataset-type", "raw_payload", "--custom-endpoint", "/v1/chat/completions"}
	}
	tmpl := []string{"--payload-template", chatTemplate, "--custom-endpoint", "/v1/chat/completions"}
	var cases []endpointCase
	for _, typ := range []string{"chat", "completions", "responses", "anthropic_messages", "huggingface_generate"} {
		cases = append(cases,
			endpointCase{name: typ + "/stream", typ: typ, streaming: true, tokens: true, serverTokens: true, synthetic: true},
			endpointCase{name: typ + "/body", typ: typ, tokens: true, serverTokens: true, synthetic: true})
	}
	cases = append(cases,
		endpointCase{name: "raw/stream", typ: "raw", args: raw("raw_chat_stream.jsonl"), streaming: true, tokens: true, serverTokens: true},
		endpointCase{name: "raw/body", typ: "raw", args: raw("raw_chat.jsonl"), tokens: true, serverTokens: true},
		// Streamed with an explicit --response-field, the body auto-detected.
		endpointCase{name: "template/stream", typ: "template", args: slices.Concat(tmpl, []string{"--response-field", "choices.0.delta.content"}),
			streaming: true, tokens: true, serverTokens: true, synthetic: true},
		endpointCase{name: "template/body", typ: "template", args: tmpl, tokens: true, serverTokens: true, synthetic: true},
		endpointCase{name: "embeddings/body", typ: "embeddings", items: 1, synthetic: true},
		endpointCase{name: "chat_embeddings/body", typ: "chat_embeddings", items: 1, synthetic: true},
		endpointCase{name: "nim_embeddings/body", typ: "nim_embeddings", items: 1, synthetic: true},
		endpointCase{name: "nim_rankings/body", typ: "nim_rankings", args: rankings, items: 5},
		endpointCase{name: "hf_tei_rankings/body", typ: "hf_tei_rankings", args: rankings, items: 5},
		endpointCase{name: "cohere_rankings/body", typ: "cohere_rankings", args: rankings, items: 5},
		// Two images per request: url results, and b64 streamed with a partial image each.
		endpointCase{name: "image_generation/body", typ: "image_generation", items: 2, synthetic: true,
			args: []string{"--extra-inputs", "n:2", "--extra-inputs", "response_format:url"}},
		endpointCase{name: "image_generation/stream", typ: "image_generation", items: 2, synthetic: true, streaming: true,
			args: []string{"--extra-inputs", "n:2", "--extra-inputs", "partial_images:1"}},
	)
	return cases
}

// warmup is the case's warmup request count.
func (c *endpointCase) warmup() int {
	if c.timed {
		return timedWarmup
	}
	return 0
}

// planArgs are the plan flags of a case.
func (c *endpointCase) planArgs() []string {
	conc := otherConcurrency
	if c.timed {
		conc = timedConcurrency
	}
	args := []string{"--endpoint-type", c.typ, "--concurrency", strconv.Itoa(conc),
		"--request-count", strconv.Itoa(nRequests), "--warmup-request-count", strconv.Itoa(c.warmup()), "--random-seed", "7"}
	if c.typ != "raw" {
		args = append(args, "--model", "mock")
	}
	if c.synthetic {
		args = append(args, "--isl", strconv.Itoa(isl))
		if c.tokens {
			args = append(args, "--osl", strconv.Itoa(osl), "--extra-inputs", "ignore_eos:true")
		}
	}
	if c.streaming {
		args = append(args, "--streaming")
		if c.serverTokens {
			args = append(args, "--use-server-token-count") // stream_options.include_usage
		}
	}
	return append(args, c.args...)
}

// TestEndpointTypes runs a streaming (where the API streams) and a non-streaming plan of
// every endpoint type through plan → replay → analyze against mockllm with known timing.
// The streamed text types, whose TTFT and ITL are checked against the server's schedule log,
// are replayed one at a time on one server (see runTimed); the others (bodies and non-token
// types), checked for counts, shapes and latencies, run two at a time to keep the package
// within its time budget, each body of text on a server of its own so that its schedule log
// holds only its requests.
func TestEndpointTypes(t *testing.T) {
	srv := startMock(t, mockTiming...)
	var timed []*chainRun
	for _, c := range endpointCases(t) {
		if c.streaming && c.tokens {
			c.timed = true
			timed = append(timed, &chainRun{c: c, srv: srv})
		}
	}
	runTimed(t, timed, checkRun)
	for _, c := range endpointCases(t) {
		if c.streaming && c.tokens {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &chainRun{c: c, srv: srv, dir: t.TempDir()}
			if c.tokens {
				r.srv = startMock(t, mockTiming...)
			}
			r.plan = compile(t, r.dir, c.planArgs()...)
			r.runDir = replayPlan(t, r.dir, r.plan, []string{r.srv.URL})
			checkRun(t, r)
		})
	}
}

// chainRun is one case on its way through the chain.
type chainRun struct {
	c                  endpointCase
	srv                *mockServer
	dir, plan, runDir  string
	compiled, replayed bool
	timing             *timing // streamed text: the run's timing against the server's
}

// endpoint is the mockllm endpoint name of a case's requests (its schedule log's endpoint).
func (c *endpointCase) endpoint() string {
	if c.typ == "raw" || c.typ == "template" {
		return "chat"
	}
	return c.typ
}

// timedAttempts bounds how often a timed run is measured. The check is relative to the
// server's own log and its bound grows with the noise the server saw, so a run fails it only
// when the client's share of the delay was out of proportion with the server's (a burst of
// load on the client alone); such a run is replayed again, up to twice, and must then pass;
// every attempt is logged. A chain that is really off fails every attempt.
const timedAttempts = 3

// runTimed takes timed cases through the chain in steps: every plan is compiled first (two at
// a time), then each is replayed alone (runs that share a server are told apart by time),
// then the runs are analysed and checked (two at a time), and runs whose timing disagreed
// with the server's are measured again, alone. A case that fails a step is skipped by the
// later ones.
func runTimed(t *testing.T, runs []*chainRun, check func(*testing.T, *chainRun)) {
	t.Helper()
	for _, r := range runs {
		r.dir = t.TempDir() // the parent's: it must outlive the three steps
	}
	t.Run("compile", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.c.name, func(t *testing.T) {
				t.Parallel()
				r.plan = compile(t, r.dir, r.c.planArgs()...)
				r.compiled = true
			})
		}
	})
	t.Run("replay", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.c.name, func(t *testing.T) {
				if !r.compiled {
					t.Skip("the plan did not compile")
				}
				r.runDir = replayPlan(t, r.dir, r.plan, []string{r.srv.URL})
				r.replayed = true
			})
		}
	})
	t.Run("check", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.c.name, func(t *testing.T) {
				t.Parallel()
				if !r.replayed {
					t.Skip("the plan was not replayed")
				}
				check(t, r)
				if r.timing == nil {
					t.Errorf("%s: no TTFT/ITL measurement", r.c.name)
				}
			})
		}
	})
	t.Run("timing", func(t *testing.T) {
		for _, r := range runs {
			if r.timing == nil {
				continue
			}
			t.Run(r.c.name, func(t *testing.T) {
				attempts := []timing{*r.timing}
				for n := 2; !attempts[len(attempts)-1].ok() && n <= timedAttempts; n++ {
					runDir := replayInto(t, filepath.Join(r.dir, fmt.Sprintf("run-%d", n)), r.plan, []string{r.srv.URL})
					out := filepath.Join(r.dir, fmt.Sprintf("client-%d", n))
					if code := analyzeRun(t, runDir, out); code != 0 {
						t.Fatalf("attempt %d: analyze exit %d", n, code)
					}
					sr, sessions := r.srv.serverRunOf(t, runDir, r.plan, r.c.endpoint(), true)
					attempts = append(attempts, *measureTiming(t, readSummary(t, out), readRecords(t, out), sr, sessions))
				}
				for i, m := range attempts {
					t.Logf("%s attempt %d: %v", r.c.name, i+1, m)
				}
				last := attempts[len(attempts)-1]
				last.check(t, &r.c)
			})
		}
	})
}

// checkRun analyses a replayed case and checks everything the issue asks of its type.
func checkRun(t *testing.T, r *chainRun) {
	t.Helper()
	c := &r.c
	out := filepath.Join(r.dir, "client")
	if code := analyzeRun(t, r.runDir, out); code != 0 {
		t.Errorf("analyze exit %d, want 0 (no errors)", code)
	}
	s := readSummary(t, out)
	recs := readRecords(t, out)
	checkClean(t, s, recs, c)
	if c.tokens {
		sr, sessions := r.srv.serverRunOf(t, r.runDir, r.plan, c.endpoint(), c.streaming)
		sr.checkPlanned(t, osl, c.streaming, c.toolCalls)
		checkTokens(t, c, s, recs, filepath.Join(r.dir, "server"), r.runDir)
		if c.streaming {
			r.timing = measureTiming(t, s, recs, sr, sessions)
		} else {
			checkBodyLatency(t, r, recs, sr, sessions)
		}
	} else {
		checkItems(t, c, s, recs)
	}
}

// checkClean: the run is what was planned, every profile request valid.
func checkClean(t *testing.T, s summary, recs []record, c *endpointCase) {
	t.Helper()
	typ, streaming := c.typ, c.streaming
	if n := s.must(t, "request_count").Avg; n != nRequests {
		t.Errorf("request_count %v, want %d", n, nRequests)
	}
	if n := s.must(t, "error_request_count").Avg; n != 0 {
		t.Errorf("error_request_count %v, want 0: %+v", n, s.errorSummary(t))
	}
	if n := s.must(t, "warmup_request_count").Avg; n != float64(c.warmup()) {
		t.Errorf("warmup_request_count %v, want %d", n, c.warmup())
	}
	var cfg struct {
		Endpoint struct {
			Type      string `json:"type"`
			Streaming bool   `json:"streaming"`
		} `json:"endpoint"`
	}
	if err := json.Unmarshal(s["input_config"], &cfg); err != nil {
		t.Fatalf("input_config: %v", err)
	}
	if cfg.Endpoint.Type != typ || cfg.Endpoint.Streaming != streaming {
		t.Errorf("input_config.endpoint %+v, want type %s streaming %v", cfg.Endpoint, typ, streaming)
	}
	if len(recs) != nRequests {
		t.Fatalf("profile_export.jsonl has %d records, want %d", len(recs), nRequests)
	}
	for _, r := range recs {
		if r.Error != nil || r.Metadata.Phase != "profiling" || r.Metadata.HTTPStatus != 200 {
			t.Fatalf("request %d: phase %s status %d error %+v", r.Metadata.RequestIndex, r.Metadata.Phase, r.Metadata.HTTPStatus, r.Error)
		}
	}
}

// checkTokens: OSL is the requested length for every request; a streamed run has a TTFT per
// request, a body none; with --use-server-token-count the usage object gives the client's
// counts. The caller checks timing against the server's schedule log.
func checkTokens(t *testing.T, c *endpointCase, s summary, recs []record, serverOut, runDir string) {
	t.Helper()
	for _, r := range recs {
		if v, _ := r.num("output_sequence_length"); v != osl {
			t.Errorf("request %d: output_sequence_length %v, want %d", r.Metadata.RequestIndex, v, osl)
		}
		v, ok := r.num("input_sequence_length")
		if !ok || v <= 0 || (c.synthetic && v != isl) {
			t.Errorf("request %d: input_sequence_length %v (present %v)", r.Metadata.RequestIndex, v, ok)
		}
	}
	if v := s.must(t, "output_token_throughput").Avg; !(v > 0) {
		t.Errorf("output_token_throughput %v", v)
	}
	if c.streaming {
		if n := *s.must(t, "time_to_first_token").Count; n != nRequests {
			t.Errorf("time_to_first_token count %v, want %d", n, nRequests)
		}
	} else {
		for _, tag := range []string{"time_to_first_token", "inter_token_latency", "inter_chunk_latency"} {
			if _, ok := s.stat(t, tag); ok {
				t.Errorf("non-streaming run reports %s", tag)
			}
		}
	}
	if !c.serverTokens {
		return
	}
	// The client's count against the server's usage object, per request, both ways round.
	if v, ok := s.stat(t, "usage_discrepancy_count"); !ok || v.Avg != 0 {
		t.Errorf("usage_discrepancy_count %+v (present %v), want 0", v, ok)
	}
	if code := analyzeRun(t, runDir, serverOut, "--use-server-token-count"); code != 0 {
		t.Errorf("analyze --use-server-token-count: exit %d", code)
		return
	}
	server := byIndex(readRecords(t, serverOut))
	for _, r := range recs {
		sr := server[r.Metadata.RequestIndex]
		if sr == nil {
			t.Fatalf("request %d missing in server-count export", r.Metadata.RequestIndex)
		}
		for _, tag := range []string{"output_sequence_length", "input_sequence_length", "usage_completion_tokens", "usage_prompt_tokens"} {
			cv, cok := r.num(tag)
			sv, sok := sr.num(tag)
			// TGI's non-streamed details carry no input_length: no prompt usage either way.
			optional := tag == "usage_prompt_tokens" && c.typ == "huggingface_generate" && !c.streaming
			if (!optional && (!cok || !sok)) || cok != sok || cv != sv {
				t.Errorf("request %d %s: client %v (present %v), server-count mode %v (present %v)", r.Metadata.RequestIndex, tag, cv, cok, sv, sok)
			}
		}
	}
	if srvSum := readSummary(t, serverOut); srvSum.must(t, "total_osl").Avg != s.must(t, "total_osl").Avg {
		t.Errorf("total_osl: server-count %v, client %v", srvSum.must(t, "total_osl").Avg, s.must(t, "total_osl").Avg)
	}
}

// nonTokenOmitted are the token metrics a non-token endpoint must leave out of the export
// (absent, not zero).
var nonTokenOmitted = []string{
	"time_to_first_token", "time_to_second_token", "time_to_first_output_token", "inter_token_latency",
	"inter_chunk_latency", "output_token_throughput_per_user", "output_sequence_length", "input_sequence_length",
	"output_token_count", "reasoning_token_count", "output_token_throughput", "total_token_throughput",
	"total_isl", "total_osl", "total_output_tokens", "prefill_throughput_per_user", "e2e_output_token_throughput",
}

// checkItems: latency, request throughput and items per second; token metrics omitted.
func checkItems(t *testing.T, c *endpointCase, s summary, recs []record) {
	t.Helper()
	for _, tag := range nonTokenOmitted {
		if _, ok := s.stat(t, tag); ok {
			t.Errorf("%s reports %s: token metrics must be omitted for non-token endpoints", c.typ, tag)
		}
	}
	for _, r := range recs {
		for _, tag := range nonTokenOmitted {
			if _, ok := r.Metrics[tag]; ok {
				t.Errorf("request %d reports %s", r.Metadata.RequestIndex, tag)
			}
		}
		if v, ok := r.num("item_count"); !ok || v != float64(c.items) {
			t.Errorf("request %d: item_count %v (present %v), want %d", r.Metadata.RequestIndex, v, ok, c.items)
		}
	}
	lat := s.p50(t, "request_latency")
	t.Logf("%s: request latency p50 %.3f ms", c.name, lat)
	if lat < listLatencyMs {
		t.Errorf("request_latency p50 %.3f ms, below the server's %d ms", lat, listLatencyMs)
	}
	dur := s.must(t, "benchmark_duration").Avg
	rps := s.must(t, "request_throughput").Avg
	if want := nRequests / dur; !(rps > 0) || math.Abs(rps-want) > 1e-6*want {
		t.Errorf("request_throughput %v, want %v (requests / benchmark_duration)", rps, want)
	}
	ips, ok := s.stat(t, "item_throughput")
	if want := float64(nRequests*c.items) / dur; !ok || math.Abs(ips.Avg-want) > 1e-6*want {
		t.Errorf("item_throughput %+v (present %v), want %v items/sec", ips, ok, want)
	}
}
