package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/mockllm"
	"github.com/llmbench/llmbench/rawlog"
)

// preflightPlan is a plan of n requests with body, closed loop at concurrency 2.
func preflightPlan(t *testing.T, n int, body string, streaming bool) string {
	ps := &planSpec{}
	ps.meta.Streaming = streaming
	ps.meta.Concurrency = 2
	ps.meta.Model = "mock-llm"
	for i := 0; i < n; i++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(i), OSL: 64, Phase: mmapds.PhaseProfile}, []byte(body))
	}
	return ps.write(t, t.TempDir())
}

// noticeBuf collects notices.
type noticeBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (n *noticeBuf) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.Write(p)
}

func (n *noticeBuf) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.b.String()
}

// runPreflighted replays plan against url with the preflight on.
func runPreflighted(t *testing.T, plan, url string) (*rawlog.Manifest, map[uint32]rawlog.Request, string, error) {
	t.Helper()
	o := testOptions(t, plan, url)
	o.Preflight = true
	var notices noticeBuf
	o.Notice = &notices
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if m == nil {
		if _, serr := os.Stat(o.OutputDir); !os.IsNotExist(serr) {
			t.Errorf("a refused run left %s: %v", o.OutputDir, serr)
		}
		return nil, nil, notices.String(), err
	}
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := rawlog.ReadManifest(o.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	return onDisk, readRun(t, m, o.OutputDir), notices.String(), nil
}

// Against llama.cpp's ways (mockllm --ignore-max-completion-tokens --close-after-response)
// the preflight finds the plan's max_completion_tokens ignored and max_tokens honoured, and
// says to compile with --use-legacy-max-tokens; it sees the server close after the response
// and tells the workers, so no request of the run pays a reconnect; it records what the
// server says it is. Against a server without quirks it finds nothing to say. Its request
// is in no log.
func TestPreflightFindsTheServersWays(t *testing.T) {
	const n = 8
	body := `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"stream":true,"max_completion_tokens":64}`
	for _, c := range []struct {
		name   string
		quirks mockllm.Quirks
		check  func(t *testing.T, pt rawlog.PreflightTarget, notices string, reqs map[uint32]rawlog.Request)
	}{
		{"llama.cpp's ways", mockllm.Quirks{IgnoreMaxCompletionTokens: true, CloseAfterResponse: true}, func(t *testing.T, pt rawlog.PreflightTarget, notices string, reqs map[uint32]rawlog.Request) {
			if pt.LimitHonoured == nil || *pt.LimitHonoured || pt.AltField != "max_tokens" || pt.AltHonoured == nil || !*pt.AltHonoured || pt.OutputTokens <= 6 {
				t.Errorf("limit findings %+v", pt)
			}
			if !strings.Contains(notices, "ignored max_completion_tokens (asked for 2 output tokens, got at least") ||
				!strings.Contains(notices, "compile the plan with --use-legacy-max-tokens") {
				t.Errorf("notices do not name the flag:\n%s", notices)
			}
			if pt.Connection != rawlog.ConnClosesAfterResponse || !strings.Contains(notices, "closes the connection after each response") {
				t.Errorf("connection %q; notices:\n%s", pt.Connection, notices)
			}
			for _, q := range reqs {
				if q.Reconnects != 0 || !q.ServerClosed || q.ConnReused {
					t.Errorf("the workers did not start knowing the server's policy: %s", brief(q))
				}
			}
		}},
		{"no quirks", mockllm.Quirks{}, func(t *testing.T, pt rawlog.PreflightTarget, notices string, reqs map[uint32]rawlog.Request) {
			if pt.LimitHonoured == nil || !*pt.LimitHonoured || pt.AltField != "" || pt.OutputTokens != 2 || pt.Connection != rawlog.ConnKeepAlive {
				t.Errorf("findings %+v", pt)
			}
			if strings.Contains(notices, "preflight") {
				t.Errorf("notices about a server without quirks:\n%s", notices)
			}
			reused := 0
			for _, q := range reqs {
				if q.ConnReused {
					reused++
				}
			}
			if reused == 0 {
				t.Error("no connection reused against a keep-alive server")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := startQuirkyMock(t, c.quirks)
			m, reqs, notices, err := runPreflighted(t, preflightPlan(t, n, body, true), url)
			if err != nil {
				t.Fatal(err)
			}
			if m.Preflight == nil || len(m.Preflight.Targets) != 1 || m.Options["preflight"] != true {
				t.Fatalf("run.json preflight %+v, options.preflight %v", m.Preflight, m.Options["preflight"])
			}
			pt := m.Preflight.Targets[0]
			if pt.Status != 200 || pt.LimitField != "max_completion_tokens" || pt.LimitAsked != 2 || pt.Server != "mockllm" || pt.ModelsOwnedBy != "mockllm" {
				t.Errorf("preflight %+v", pt)
			}
			if len(reqs) != n || m.Counts.Completed != n {
				t.Fatalf("%d records, counts %+v: the preflight is not the run's", len(reqs), m.Counts)
			}
			c.check(t, pt, notices, reqs)
		})
	}
}

// fakeServer answers the chat path with answer and serves identity pages, as llama.cpp and
// vLLM do.
func fakeServer(t *testing.T, answer http.HandlerFunc) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", answer)
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"other","owned_by":"someone"},{"id":"mock-llm","owned_by":"llamacpp"}]}`)
	})
	mux.HandleFunc("/props", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"default_generation_settings":{"n_ctx":4096},"total_slots":4,"build_info":"b7588-abc","model_path":"/m.gguf"}`)
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"version":"0.11.0"}`) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// onlyMaxCompletionTokens answers a non-streamed chat body with as many tokens as its
// max_completion_tokens asks (max_tokens is ignored: 50 words), usage included.
func onlyMaxCompletionTokens(w http.ResponseWriter, r *http.Request) {
	var b struct {
		MCT *int `json:"max_completion_tokens"`
	}
	json.NewDecoder(r.Body).Decode(&b)
	n := 50
	if b.MCT != nil {
		n = *b.MCT
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Server", "fake/1")
	fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":3,"completion_tokens":%d,"total_tokens":%d}}`,
		strings.TrimSpace(strings.Repeat("w ", n)), n, n+3)
}

// The reverse of llama.cpp: a plan made with --use-legacy-max-tokens against a server that
// reads only max_completion_tokens is told to drop the flag. Identity comes from /v1/models
// (the plan's model), /props and /version, and a plan without a limit field is neither
// judged nor left to run long (the preflight adds max_tokens).
func TestPreflightReverseAndIdentity(t *testing.T) {
	url := fakeServer(t, onlyMaxCompletionTokens)
	m, _, notices, err := runPreflighted(t, preflightPlan(t, 2, `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_tokens":64}`, false), url)
	if err != nil {
		t.Fatal(err)
	}
	pt := m.Preflight.Targets[0]
	if pt.LimitHonoured == nil || *pt.LimitHonoured || pt.OutputTokens != 50 || pt.OutputFrom != "usage" || pt.AltField != "max_completion_tokens" || pt.AltHonoured == nil || !*pt.AltHonoured {
		t.Errorf("limit findings %+v", pt)
	}
	if !strings.Contains(notices, "ignored max_tokens (asked for 2 output tokens, got at least 50) and honours max_completion_tokens: compile the plan without --use-legacy-max-tokens") {
		t.Errorf("notices:\n%s", notices)
	}
	if pt.Server != "fake/1" || pt.ModelsOwnedBy != "llamacpp" || pt.LlamaCppBuild != "b7588-abc" || pt.LlamaCppSlots != 4 || pt.VLLMVersion != "0.11.0" {
		t.Errorf("identity %+v", pt)
	}
	m, _, _, err = runPreflighted(t, preflightPlan(t, 2, `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}]}`, false), url)
	if err != nil {
		t.Fatal(err)
	}
	if pt := m.Preflight.Targets[0]; pt.LimitField != "max_tokens" || pt.LimitHonoured != nil || len(pt.Warnings) != 0 {
		t.Errorf("a plan without a limit: %+v", pt)
	}
}

// The preflight refuses a run that could measure nothing, in one line saying why, with
// nothing of the plan sent and no run directory: an unreachable URL, a client error to the
// plan's own request (with the server's message), an answer that is not the API's. A
// server error or a busy server is a warning: the run goes on.
func TestPreflightRefusesOrWarns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	status := func(code int, body string) string {
		return fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			io.WriteString(w, body)
		})
	}
	body := `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":64}`
	for _, c := range []struct {
		name, url string
		refused   bool
		want      string
	}{
		{"unreachable", dead, true, "connection refused: the server cannot be reached, so every request of the run would fail; nothing of the plan was sent"},
		{"client error", status(404, `{"error":{"message":"The model mock-llm does not exist.","type":"NotFoundError"}}`), true,
			`answered the plan's first request with HTTP 404: "The model mock-llm does not exist.": every request of the run would get the same`},
		{"not the API's", status(200, `<html><body>welcome to nginx</body></html>`), true, "answered with a body that is not a chat response"},
		{"server error", status(503, `{"error":{"message":"Loading model"}}`), false, `answered HTTP 503: "Loading model": the run goes on`},
		{"busy", status(429, `too many requests`), false, `answered HTTP 429: "too many requests": the run goes on`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, notices, err := runPreflighted(t, preflightPlan(t, 2, body, false), c.url)
			if c.refused {
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "replay: preflight: ") {
					t.Fatalf("error %v, want one line with %q", err, c.want)
				}
				return
			}
			if err != nil || !strings.Contains(notices, c.want) {
				t.Fatalf("error %v; notices:\n%s\nwant %q", err, notices, c.want)
			}
		})
	}
}

// Ctrl-C during the preflight ends it at once, with nothing of the plan sent and no run
// directory (the server here never answers).
func TestPreflightInterrupted(t *testing.T) {
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()
	})
	o := testOptions(t, preflightPlan(t, 2, `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`, false), url)
	o.Preflight = true
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, r.Stop)
	start := time.Now()
	m, err := r.Run()
	if m != nil || err == nil || !strings.Contains(err.Error(), "preflight: interrupted; nothing of the plan was sent") || time.Since(start) > 30*time.Second {
		t.Fatalf("manifest %v, err %v after %v", m, err, time.Since(start))
	}
	if _, err := os.Stat(o.OutputDir); !os.IsNotExist(err) {
		t.Errorf("run directory left: %v", err)
	}
}

// The preflight never blocks a run that would succeed. A body bound to its output limit
// (AIPerf's walkthrough: --extra-inputs min_tokens:128 ignore_eos:true) keeps min_tokens
// within the 2 tokens it asks for, so mockllm (vLLM's rule: min_tokens <= max_tokens) answers
// it; a server that refuses the shortened body for a reason of its own (a least max_tokens)
// is asked again with the plan's body unchanged, and the run goes on; a server that refuses
// the plan's own body refuses the run, and only then is "every request" said.
func TestPreflightKeepsTheBodyValid(t *testing.T) {
	body := `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"stream":true,"max_completion_tokens":16,"min_tokens":16,"ignore_eos":true}`
	t.Run("min_tokens against mockllm", func(t *testing.T) {
		m, reqs, notices, err := runPreflighted(t, preflightPlan(t, 3, body, true), startQuirkyMock(t, mockllm.Quirks{}))
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		pt := m.Preflight.Targets[0]
		if pt.Status != 200 || pt.LimitAsked != 2 || pt.LimitHonoured == nil || !*pt.LimitHonoured || strings.Contains(notices, "preflight") {
			t.Errorf("preflight %+v; notices:\n%s", pt, notices)
		}
		if len(reqs) != 3 || m.Counts.Completed != 3 {
			t.Errorf("counts %+v", m.Counts)
		}
	})

	// atLeast refuses a body asking for fewer than 8 tokens; refuseAll refuses every body.
	var mu sync.Mutex
	var seen []string
	server := func(refuseAll bool) string {
		mu.Lock()
		seen = nil
		mu.Unlock()
		return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			seen = append(seen, string(b))
			mu.Unlock()
			var v struct {
				MCT int `json:"max_completion_tokens"`
			}
			json.Unmarshal(b, &v)
			if refuseAll || v.MCT < 8 {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":{"message":"max_completion_tokens must be at least 8, got %d"}}`, v.MCT)
				return
			}
			onlyMaxCompletionTokens(w, r)
		})
	}
	plain := `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":16}`
	t.Run("shortened body refused, plan's accepted", func(t *testing.T) {
		m, _, notices, err := runPreflighted(t, preflightPlan(t, 2, plain, false), server(false))
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		pt := m.Preflight.Targets[0]
		if pt.Status != 200 || pt.LimitField != "" || pt.LimitHonoured != nil || m.Counts.Completed != 2 {
			t.Errorf("preflight %+v, counts %+v", pt, m.Counts)
		}
		if !strings.Contains(notices, `refused the plan's first request with its output limit lowered to 2 (HTTP 400: "max_completion_tokens must be at least 8, got 2") and accepted it as the plan has it`) {
			t.Errorf("notices:\n%s", notices)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < 2 || seen[1] != plain {
			t.Errorf("the retry did not send the plan's body unchanged: %q", seen)
		}
	})
	t.Run("plan's own body refused", func(t *testing.T) {
		_, _, _, err := runPreflighted(t, preflightPlan(t, 2, plain, false), server(true))
		want := `answered the plan's first request with HTTP 400: "max_completion_tokens must be at least 8, got 16": every request of the run would get the same`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want %q", err, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 2 || seen[1] != plain {
			t.Errorf("the server saw %q: want the shortened body, then the plan's", seen)
		}
	})
}

// A base URL ending in /v1 (an OpenAI SDK's base_url) sends to /v1/chat/completions, not
// /v1/v1/..., and the identity pages are still found at the server's root; a base URL whose
// path the server does not serve is refused by the preflight with the path it tried and the
// fix.
func TestPreflightBaseURLPath(t *testing.T) {
	url := fakeServer(t, onlyMaxCompletionTokens)
	body := `{"model":"mock-llm","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":4}`
	for _, base := range []string{url + "/v1", url + "/v1/", strings.TrimPrefix(url, "http://") + "/v1"} {
		m, _, notices, err := runPreflighted(t, preflightPlan(t, 2, body, false), base)
		if err != nil {
			t.Fatalf("--url %s: %v", base, err)
		}
		if pt := m.Preflight.Targets[0]; pt.Status != 200 || pt.LlamaCppBuild != "b7588-abc" || pt.VLLMVersion != "0.11.0" || pt.ModelsOwnedBy != "llamacpp" || m.Counts.Completed != 2 {
			t.Errorf("--url %s: preflight %+v, counts %+v; notices:\n%s", base, pt, m.Counts, notices)
		}
	}
	_, _, _, err := runPreflighted(t, preflightPlan(t, 2, body, false), url+"/api")
	want := "/api/v1/chat/completions answered the plan's first request with HTTP 404"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the path tried was /api/v1/chat/completions: --url's path /api goes before the plan's /v1/chat/completions") {
		t.Fatalf("error %v, want %q and the fix", err, want)
	}
}
