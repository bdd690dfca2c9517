package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/internal/testserver"
)

// TestMain lets the test binary double as the worker binary: the coordinator tests start
// os.Args[0] with WorkerArg.
//
// LLMBENCH_TEST_CLIENT (loop or net), when set, is the client every test runs that does not
// choose one (DefaultClient), in this process and in the workers it starts: the suite then
// runs on that client.
func TestMain(m *testing.M) {
	if c := os.Getenv("LLMBENCH_TEST_CLIENT"); c != "" {
		DefaultClient = c
	}
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		os.Exit(WorkerMain(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == floorMockArg {
		os.Exit(floorMockMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// job is what a test request body asks the test server to do.
type job struct {
	N      int    `json:"n"`       // content events (streaming) or words (JSON body)
	TTFTms int    `json:"ttft_ms"` // before the first event
	ITLms  int    `json:"itl_ms"`  // between events
	Stream bool   `json:"stream"`
	Status int    `json:"status"` // non-200 status to return
	Mode   string `json:"mode"`   // "", "stall", "reset", "close" (close-delimited body)
	Text   string `json:"text"`   // content of every event (default "tok ")
	Seen   string `json:"seen"`   // echoed back by live-history tests
}

func jobBody(j job) []byte {
	b, _ := json.Marshal(j)
	return b
}

// testServer is a small OpenAI-style SSE server with known timing.
type testServer struct {
	*httptest.Server
	conns    atomic.Int64 // connections accepted
	requests atomic.Int64
	mu       sync.Mutex
	bodies   []string
	headers  []http.Header
	keep     bool
}

func newTestServer(t testing.TB, configure ...func(*http.Server)) *testServer {
	ts := &testServer{}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(ts.handle))
	for _, f := range configure {
		f(ts.Server.Config)
	}
	ts.Server.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) handle(w http.ResponseWriter, r *http.Request) {
	ts.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	if ts.keep {
		ts.mu.Lock()
		ts.bodies = append(ts.bodies, string(body))
		ts.headers = append(ts.headers, r.Header.Clone())
		ts.mu.Unlock()
	}
	var j job
	if err := json.Unmarshal(body, &j); err != nil {
		http.Error(w, "bad job: "+err.Error(), 400)
		return
	}
	if j.Text == "" {
		j.Text = "tok "
	}
	sleep := func(ms int) {
		if ms > 0 {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
	}
	switch j.Mode {
	case "stall":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	case "reset":
		hj := w.(http.Hijacker)
		c, _, _ := hj.Hijack()
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
		return
	case "close":
		hj := w.(http.Hijacker)
		c, bw, _ := hj.Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
		for i := 0; i < j.N; i++ {
			bw.WriteString(j.Text)
			bw.Flush()
		}
		c.Close()
		return
	}
	if j.Status != 0 && j.Status != 200 {
		http.Error(w, `{"error":{"message":"requested failure"}}`, j.Status)
		return
	}
	fl := w.(http.Flusher)
	if !j.Stream {
		sleep(j.TTFTms)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}],"seen":%q}`, strings.Repeat(j.Text, j.N), j.Seen)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl.Flush()
	sleep(j.TTFTms)
	for i := 0; i < j.N; i++ {
		if i > 0 {
			sleep(j.ITLms)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", j.Text)
		fl.Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// planSpec builds a plan file.
type planSpec struct {
	meta    mmapds.Meta
	records []mmapds.Record
	bodies  [][]byte
	nodes   []mmapds.Node // a graph plan's nodes, one per record; nil: no graph
}

func (ps *planSpec) add(r mmapds.Record, body []byte) {
	ps.records = append(ps.records, r)
	ps.bodies = append(ps.bodies, body)
}

func (ps *planSpec) write(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "test.plan")
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range ps.records {
		if err := w.Add(r, ps.bodies[i]); err != nil {
			t.Fatal(err)
		}
		if ps.nodes != nil {
			if err := w.AddNode(ps.nodes[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := ps.meta
	if m.Paths == nil {
		m.Paths = []string{"/v1/chat/completions"}
	}
	if m.Endpoint == "" {
		m.Endpoint = "chat"
	}
	if m.Method == "" {
		m.Method = "POST"
	}
	if _, err := w.Close(&m); err != nil {
		t.Fatal(err)
	}
	return path
}

// singleTurn returns a plan of n single-turn requests: open loop at offsets(i) when offsets
// is non-nil, closed loop otherwise.
func singleTurn(n int, j job, offsets func(i int) int64) *planSpec {
	ps := &planSpec{}
	ps.meta.Streaming = j.Stream
	for i := 0; i < n; i++ {
		off := mmapds.NoSendOffset
		if offsets != nil {
			off = offsets(i)
		}
		ps.add(mmapds.Record{SendOffsetNs: off, DelayNs: -1, Session: uint32(i), Phase: mmapds.PhaseProfile}, jobBody(j))
	}
	return ps
}

// inproc runs a worker in this process.
type inproc struct {
	start int64
	fails *[]string // the failed reports, when not nil
}

func (inproc) ready()                                {}
func (inproc) progress(sent, done, errs int64) error { return nil }
func (p inproc) failed(msg string) {
	if p.fails != nil {
		*p.fails = append(*p.fails, msg)
	}
}
func (p inproc) waitStart(<-chan string) (int64, bool) {
	return p.start, true
}

// runInProcess runs worker id of workers over plan against url and returns its result and
// the records it logged, by plan index.
func runInProcess(t testing.TB, cfg workerConfig, cmds <-chan string) (workerResult, map[uint32]rawlog.Request, *rawlog.Summary) {
	t.Helper()
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	if cfg.Log == "" {
		cfg.Log = filepath.Join(t.TempDir(), "w.rawlog")
	}
	if cfg.CPU == 0 {
		cfg.CPU = -1
	}
	if cfg.RequestTimeoutNs == 0 {
		cfg.RequestTimeoutNs = int64(10 * time.Second)
	}
	if cmds == nil {
		cmds = make(chan string)
	}
	res, err := runWorker(cfg, cmds, inproc{start: time.Now().Add(20 * time.Millisecond).UnixNano()})
	if err != nil {
		t.Fatal(err)
	}
	return res, readLog(t, cfg.Log), summarize(t, cfg.Log)
}

func summarize(t testing.TB, path string) *rawlog.Summary {
	t.Helper()
	s, err := rawlog.Summarize(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readLog returns a log's request records by plan index, failing on duplicates.
func readLog(t testing.TB, path string) map[uint32]rawlog.Request {
	t.Helper()
	r, err := rawlog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[uint32]rawlog.Request{}
	for {
		k, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if k != rawlog.KindRequest {
			continue
		}
		q := *r.Request()
		q.ReadNs = append([]int64(nil), q.ReadNs...)
		q.ReadEnd = append([]uint32(nil), q.ReadEnd...)
		q.Body = append([]byte(nil), q.Body...)
		if _, dup := out[q.Index]; dup {
			t.Fatalf("%s: request %d logged twice", path, q.Index)
		}
		out[q.Index] = q
	}
}

// percentile returns the p-th percentile (0..100) of v (sorted in place).
// runReplay runs o to its end and returns the run's manifest; an error fails the test.
func runReplay(t testing.TB, o Options) *rawlog.Manifest {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func percentile(v []int64, p float64) int64 {
	if len(v) == 0 {
		return 0
	}
	sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
	i := int(p / 100 * float64(len(v)-1))
	return v[i]
}

// countSSEData counts "data: {" events in a body.
func countSSEData(b []byte) int { return testserver.CountSSEData(b) }
