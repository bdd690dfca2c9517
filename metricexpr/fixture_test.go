package metricexpr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// A synthetic run whose every fact is known: a plan and one worker log written with the
// plan and raw log writers, the way replay writes them, so the expressions are checked
// against what each request is, not against another computation.

const msNs = int64(1_000_000)

// fakeReq is one request of the fixture.
type fakeReq struct {
	session, turn uint32
	isl           uint32
	sendNs        int64   // write start, ns after the run's start
	chunksNs      []int64 // content events, ns after the write start
	sameRead      int     // the last sameRead+1 content events arrive in one read
	usage         bool    // a usage chunk with prompt and completion tokens
	status        int     // 0: 200
	lost          bool    // no log holds it
}

// fixture returns n requests: request i is session i/2, turn i%2, ISL 100+10i, sent at i ×
// 50 ms, with 2+i%4 content events (the first after 10+i ms, then every 3 ms, the last two
// in one read), usage for even i; request 5 fails with HTTP 500, request n-1 is lost.
func fixture(n int) []fakeReq {
	out := make([]fakeReq, n)
	for i := range out {
		r := fakeReq{session: uint32(i / 2), turn: uint32(i % 2), isl: uint32(100 + 10*i), sendNs: int64(i) * 50 * msNs,
			usage: i%2 == 0, sameRead: 1}
		for k := 0; k < 2+i%4; k++ {
			r.chunksNs = append(r.chunksNs, int64(10+i)*msNs+int64(k)*3*msNs)
		}
		if i == 5 {
			r.status = 500
		}
		r.lost = i == n-1
		out[i] = r
	}
	return out
}

// wordCounter counts whitespace-separated words: each chunk " w" is one token.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func sse(obj string) string { return "data: " + obj + "\n\n" }

// writeFixture writes the plan, the log and run.json of reqs into dir.
func writeFixture(t testing.TB, dir string, reqs []fakeReq) {
	t.Helper()
	planPath := filepath.Join(dir, "plan.llmplan")
	pw, err := mmapds.Create(planPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		rec := mmapds.Record{SendOffsetNs: r.sendNs, DelayNs: -1, Session: r.session, Turn: r.turn, ISL: r.isl, OSL: 8, Phase: mmapds.PhaseProfile}
		if err := pw.Add(rec, []byte(fmt.Sprintf(`{"model":"m","i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	h, err := pw.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Streaming: true, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%x", h)
	const start = int64(1_700_000_000_000_000_000)
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(run, "worker-000.rawlog"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := rawlog.NewWriter(f, rawlog.Header{Worker: 0, PID: 100, CPU: 0, PlanHash: hash, StartUnixNs: start, PlanPath: planPath,
		Planned: len(reqs), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	for i, r := range reqs {
		if r.lost {
			continue
		}
		q := &rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeCompleted, Status: 200, IntendedNs: r.sendNs, ReadyNs: r.sendNs,
			WriteStartNs: r.sendNs, WriteEndNs: r.sendNs + 20_000, HeaderNs: r.sendNs + msNs, ConnectStartNs: -1, ConnectEndNs: -1}
		addRead := func(at int64, data string) {
			q.Body = append(q.Body, data...)
			q.ReadNs = append(q.ReadNs, at)
			q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
			q.EndNs = at + 10_000
		}
		if r.status != 0 {
			q.Status = r.status
			addRead(r.sendNs+2*msNs, `{"error":{"message":"boom"}}`)
		} else {
			addRead(r.sendNs+2*msNs, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`))
			chunk := sse(`{"choices":[{"index":0,"delta":{"content":" w"}}]}`)
			arr := r.arrivals()
			n := len(arr)
			for k := 0; k < n; {
				j := k
				for j < n && arr[j] == arr[k] {
					j++
				}
				addRead(r.sendNs+arr[k], strings.Repeat(chunk, j-k))
				k = j
			}
			tail := "data: [DONE]\n\n"
			if r.usage {
				tail = sse(fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, r.isl, n, int(r.isl)+n)) + tail
			}
			addRead(q.EndNs+msNs, tail)
		}
		if err := w.WriteRequest(q); err != nil {
			t.Fatal(err)
		}
		written++
	}
	if err := w.Close(rawlog.Footer{TimeNs: 60_000 * msNs, Requests: written, Status: "complete"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m := &rawlog.Manifest{Tool: "llmbench", ToolVersion: "test", GoVersion: "go", PlanHash: hash, PlanPath: planPath,
		URLs: []string{"http://127.0.0.1:8000"}, StartUnixNs: start, StartTime: "2023-11-14T22:13:20Z", EndUnixNs: start + 60_000*msNs,
		Host: "testhost", Kernel: "linux", CommandLine: []string{"replay"}, Status: rawlog.StatusComplete,
		Workers: []rawlog.WorkerInfo{{ID: 0, PID: 100, CPU: 0, Log: "worker-000.rawlog", Planned: len(reqs), Status: "complete"}}}
	m.Counts.Planned = len(reqs)
	if err := rawlog.WriteManifest(run, m); err != nil {
		t.Fatal(err)
	}
}

// arrivals are the content events' arrivals after the write start: the last sameRead+1
// arrive with the last one's read.
func (r fakeReq) arrivals() []int64 {
	arr := append([]int64(nil), r.chunksNs...)
	n := len(arr)
	for k := max(n-1-r.sameRead, 0); k < n; k++ {
		arr[k] = arr[n-1]
	}
	return arr
}

// record is what a test reads back of one profile_export.jsonl line.
type record struct {
	Metadata struct {
		RequestIndex int     `json:"request_index"`
		Group        *string `json:"group"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
}

// value is the record's value of tag, false when it has none.
func (r *record) value(tag string) (float64, bool) {
	m, ok := r.Metrics[tag]
	if !ok {
		return 0, false
	}
	var v float64
	return v, json.Unmarshal(m.Value, &v) == nil
}

// analyse analyses the fixture in dir with reg and the options, returning the summary and
// the per-request records by plan index.
func analyse(t testing.TB, dir string, reg *analyze.Registry, o analyze.Options) (*analyze.Summary, map[int]*record) {
	t.Helper()
	o.RunDirs = []string{filepath.Join(dir, "run")}
	o.Metrics, o.Tokenizer, o.TempDir = reg, wordCounter{}, t.TempDir()
	var b strings.Builder
	s, err := analyze.Analyze(o, &b)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[int]*record{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		recs[r.Metadata.RequestIndex] = &r
	}
	return s, recs
}
