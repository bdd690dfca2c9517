package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/probe"
)

// probeServer answers the readiness probes 503 until it has refused `refuse` of them, then
// 200; plan requests (test jobs) are the test server's. It records the order of what it saw.
type probeServer struct {
	*httptest.Server
	mu     sync.Mutex
	refuse int
	log    []string // "probe 503", "probe 200", "plan"
	bodies []string // probe bodies
	urls   []string // probe request URIs
}

func newProbeServer(t *testing.T, refuse int) *probeServer {
	ts := newTestServer(t)
	ps := &probeServer{refuse: refuse}
	ps.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var j job
		isPlan := r.Method == http.MethodPost && json.Unmarshal(body, &j) == nil && j.N > 0
		ps.mu.Lock()
		if isPlan {
			ps.log = append(ps.log, "plan")
			ps.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			ts.handle(w, r)
			return
		}
		ps.urls = append(ps.urls, r.Method+" "+r.URL.RequestURI())
		ps.bodies = append(ps.bodies, string(body))
		code := 200
		if ps.refuse > 0 {
			ps.refuse--
			code = 503
		}
		ps.log = append(ps.log, "probe "+http.StatusText(code))
		ps.mu.Unlock()
		w.WriteHeader(code)
		if code != 200 {
			// llama.cpp's answer while it loads the model.
			w.Write([]byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`))
			return
		}
		w.Write([]byte(`{"object":"list","data":[]}`))
	}))
	t.Cleanup(ps.Close)
	return ps
}

// With wait-for-model, Run probes every interval until the model answers, and sends the
// plan only after: models polls GET /v1/models (keeping the base's query), inference sends
// a one-token request of the plan's type to its path, both does one then the other.
func TestWaitForModel(t *testing.T) {
	for _, c := range []struct {
		mode   string
		refuse int
		want   []string // probe request URIs, in order
	}{
		{probe.WaitModels, 2, []string{"GET /v1/models?v=1", "GET /v1/models?v=1", "GET /v1/models?v=1"}},
		{probe.WaitInference, 1, []string{"POST /v1/chat/completions?v=1", "POST /v1/chat/completions?v=1"}},
		{probe.WaitBoth, 0, []string{"GET /v1/models?v=1", "POST /v1/chat/completions?v=1"}},
	} {
		srv := newProbeServer(t, c.refuse)
		ps := singleTurn(4, job{N: 2, Stream: true}, nil)
		ps.meta.Concurrency, ps.meta.Model = 1, "m"
		plan := ps.write(t, t.TempDir())
		o := testOptions(t, plan, srv.URL+"/?v=1")
		o.WaitForModel, o.WaitForModelMode, o.WaitForModelInterval = 20*time.Second, c.mode, 10*time.Millisecond
		var notices strings.Builder
		o.Notice = &notices
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Run()
		if err != nil || m.Status != rawlog.StatusComplete || m.Counts.Completed != 4 {
			t.Fatalf("%s: %v %+v", c.mode, err, m)
		}
		srv.mu.Lock()
		log, urls, bodies := srv.log, srv.urls, srv.bodies
		srv.mu.Unlock()
		if strings.Join(urls, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: probes %q, want %q", c.mode, urls, c.want)
		}
		probes := len(c.want)
		if len(log) != probes+4 || log[probes-1] != "probe OK" || strings.Contains(strings.Join(log[probes:], " "), "probe") {
			t.Errorf("%s: server saw %q; want the probes, then the 4 plan requests", c.mode, log)
		}
		for i, u := range urls {
			if strings.HasPrefix(u, "POST") && (!strings.Contains(bodies[i], `"model":"m"`) || !strings.Contains(bodies[i], `"max_completion_tokens":1`)) {
				t.Errorf("%s: inference probe body %s", c.mode, bodies[i])
			}
		}
		if !strings.Contains(notices.String(), "replay: the model answered ("+c.mode+") after ") {
			t.Errorf("%s: notices %q", c.mode, notices.String())
		}
	}
}

// A model that never answers in time: Run fails with one line naming the probe and the last
// answer, nothing of the plan is sent, and no run directory is left.
func TestWaitForModelTimeout(t *testing.T) {
	srv := newProbeServer(t, 1<<30)
	plan := singleTurn(4, job{N: 2, Stream: true}, nil).write(t, t.TempDir())
	o := testOptions(t, plan, srv.URL)
	o.WaitForModel, o.WaitForModelInterval = 300*time.Millisecond, 20*time.Millisecond
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if m != nil || err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "wait for model: GET "+srv.URL+"/v1/models did not answer 2xx within 300ms") ||
		!strings.Contains(err.Error(), `last: HTTP 503 Service Unavailable: "Loading model"`) {
		t.Fatalf("manifest %v, err %v", m, err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.log) < 2 || strings.Contains(strings.Join(srv.log, " "), "plan") {
		t.Fatalf("server saw %q; want probes only", srv.log)
	}
	if _, err := os.Stat(o.OutputDir); !os.IsNotExist(err) {
		t.Fatalf("run directory left behind: %v", err)
	}
}

// An inference probe needs a request the plan's endpoint type can render: a raw plan is
// refused up front.
func TestWaitForModelBadMode(t *testing.T) {
	ps := singleTurn(1, job{N: 1}, nil)
	ps.meta.Endpoint = "raw"
	plan := ps.write(t, t.TempDir())
	for _, c := range []struct{ mode, want string }{
		{probe.WaitInference, "wait-for-model-mode inference: plan " + plan + " has no probe request"},
		{"ready", `wait-for-model-mode "ready": want models, inference or both`},
	} {
		o := testOptions(t, plan, "http://127.0.0.1:1")
		o.WaitForModel, o.WaitForModelMode = time.Second, c.mode
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.mode, err, c.want)
		}
	}
}
