package analyze

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// Builders for synthetic run directories: a plan (mmapds), worker logs (rawlog) and run.json,
// with SSE bodies cut into timed reads the way replay records them.

// wordCounter counts whitespace-separated words: each synthetic chunk " w" is one token, so
// tests know the exact OSL without depending on a real tokenizer's merges.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

const ms = int64(1_000_000)
const us = int64(1_000)

// read is one socket read: when it returned and the bytes it delivered.
type read struct {
	at   int64
	data string
}

func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sseData(obj string) string { return "data: " + obj + "\n\n" }

func chunk(content string) string {
	return sseData(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + jstr(content) + `}}]}`)
}

func reasoningChunk(text string) string {
	return sseData(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":` + jstr(text) + `}}]}`)
}

func roleChunk() string {
	return sseData(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
}

func usageChunk(prompt, completion int) string {
	return sseData(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		prompt, completion, prompt+completion))
}

const doneEvent = "data: [DONE]\n\n"

// request builds a completed 200 request sent at send whose response arrived in reads.
func request(index int, send int64, reads ...read) *rawlog.Request {
	q := &rawlog.Request{Index: uint32(index), Outcome: rawlog.OutcomeCompleted, Status: 200,
		IntendedNs: -1, ReadyNs: send, WriteStartNs: send, WriteEndNs: send + 20*us, HeaderNs: -1, EndNs: send + 30*us,
		ConnectStartNs: -1, ConnectEndNs: -1}
	for i, r := range reads {
		if i == 0 {
			q.HeaderNs = r.at - 10*us
		}
		q.Body = append(q.Body, r.data...)
		q.ReadNs = append(q.ReadNs, r.at)
		q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
		q.EndNs = r.at + 10*us
	}
	return q
}

// streamReads is a typical streamed answer: a role-only chunk with the headers, n content
// chunks of one token (" w") each after ttft and then every itl, a usage-only chunk and
// [DONE] in the last read. reasoning of the n are reasoning chunks (" r") first.
func streamReads(send, ttft, itl int64, n, reasoning, isl int) []read {
	reads := []read{{send + ttft/2, roleChunk()}}
	for k := 0; k < n; k++ {
		c := chunk(" w")
		if k < reasoning {
			c = reasoningChunk(" r")
		}
		reads = append(reads, read{send + ttft + int64(k)*itl, c})
	}
	last := send + ttft + int64(n-1)*itl + 200*us
	reads = append(reads, read{last, usageChunk(isl, n) + doneEvent})
	return reads
}

// planSpec describes a synthetic plan.
type planSpec struct {
	meta mmapds.Meta
	recs []mmapds.Record
	// bodyExtra is appended inside every body's object (`,"max_tokens":8`).
	bodyExtra string
	// bodies > 0: record i sends stored body i % bodies (records share it, as a plan that
	// samples fewer dataset entries than it sends).
	bodies int
}

// writePlan writes the plan and returns its hash.
func writePlan(t testing.TB, path string, ps planSpec) string {
	t.Helper()
	w, err := mmapds.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[int]mmapds.BodyRef{}
	for i, r := range ps.recs {
		if ps.bodies > 0 {
			ref, ok := refs[i%ps.bodies]
			if !ok {
				if ref, err = w.AddBody([]byte(fmt.Sprintf(`{"model":"m","i":%d%s}`, i%ps.bodies, ps.bodyExtra))); err != nil {
					t.Fatal(err)
				}
				refs[i%ps.bodies] = ref
			}
			if err := w.AddRef(r, ref); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := w.Add(r, []byte(fmt.Sprintf(`{"model":"m","i":%d%s}`, i, ps.bodyExtra))); err != nil {
			t.Fatal(err)
		}
	}
	m := ps.meta
	if m.Paths == nil {
		m.Paths = []string{"/v1/chat/completions"}
	}
	if m.Method == "" {
		m.Method = "POST"
	}
	if m.Endpoint == "" {
		m.Endpoint = "chat"
	}
	h, err := w.Close(&m)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h)
}

// workerLog is one worker's log content.
type workerLog struct {
	reqs     []*rawlog.Request
	cpu      []rawlog.CPUSample
	gpu      []rawlog.GPUSample
	noFooter bool
	planned  int // 0: len(reqs)
}

// runSpec describes a run directory.
type runSpec struct {
	start     int64 // wall-clock zero (Unix ns)
	planFile  string
	planHash  string
	workers   []workerLog
	telemetry []rawlog.GPUSample
	status    string
	// sessionHeader is run.json's options.session_header ("" leaves it out).
	sessionHeader string
}

// writeRun writes dir/run.json, dir/worker-NNN.rawlog and the telemetry log.
func writeRun(t testing.TB, dir string, rs runSpec) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &rawlog.Manifest{Tool: "llmbench", ToolVersion: "test", GoVersion: "go", PlanHash: rs.planHash,
		PlanPath: rs.planFile, URLs: []string{"http://127.0.0.1:8000"}, StartUnixNs: rs.start,
		StartTime: "2026-01-01T00:00:00Z", EndUnixNs: rs.start + 60_000*ms, Host: "testhost", Kernel: "linux",
		CommandLine: []string{"replay", "--plan", rs.planFile}, Status: rs.status}
	for _, g := range rs.telemetry {
		id := fmt.Sprintf("%d:NVIDIA H200:%s", g.GPU, g.UUID)
		gpus, _ := m.Options["gpus"].([]any)
		if !slices.Contains(gpus, any(id)) {
			if m.Options == nil {
				m.Options = map[string]any{}
			}
			m.Options["gpus"] = append(gpus, id)
		}
	}
	if rs.sessionHeader != "" {
		if m.Options == nil {
			m.Options = map[string]any{}
		}
		m.Options["session_header"] = rs.sessionHeader
	}
	if m.Status == "" {
		m.Status = rawlog.StatusComplete
	}
	for wi, wl := range rs.workers {
		name := fmt.Sprintf("worker-%03d.rawlog", wi)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		planned := wl.planned
		if planned == 0 {
			planned = len(wl.reqs)
		}
		w, err := rawlog.NewWriter(f, rawlog.Header{Worker: wi, PID: 100 + wi, CPU: wi, PlanHash: rs.planHash, StartUnixNs: rs.start,
			PlanPath: rs.planFile, Planned: planned, Workers: len(rs.workers)})
		if err != nil {
			t.Fatal(err)
		}
		ci := 0
		for _, q := range wl.reqs {
			for ci < len(wl.cpu) && wl.cpu[ci].TimeNs <= q.EndNs {
				if err := w.WriteCPU(wl.cpu[ci]); err != nil {
					t.Fatal(err)
				}
				ci++
			}
			if err := w.WriteRequest(q); err != nil {
				t.Fatal(err)
			}
		}
		for ; ci < len(wl.cpu); ci++ {
			if err := w.WriteCPU(wl.cpu[ci]); err != nil {
				t.Fatal(err)
			}
		}
		for _, g := range wl.gpu {
			if err := w.WriteGPU(g); err != nil {
				t.Fatal(err)
			}
		}
		if !wl.noFooter {
			if err := w.Close(rawlog.Footer{TimeNs: 60_000 * ms, Requests: len(wl.reqs), Status: "complete"}); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		m.Workers = append(m.Workers, rawlog.WorkerInfo{ID: wi, PID: 100 + wi, CPU: wi, Log: name, Planned: planned, Status: "complete"})
		m.Counts.Planned += planned
	}
	if len(rs.telemetry) > 0 {
		f, err := os.Create(filepath.Join(dir, "telemetry.rawlog"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := rawlog.NewWriter(f, rawlog.Header{Worker: -1, PlanHash: rs.planHash, StartUnixNs: rs.start})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range rs.telemetry {
			if err := w.WriteGPU(g); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(rawlog.Footer{TimeNs: 60_000 * ms, Status: "complete"}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		m.TelemetryLog = "telemetry.rawlog"
	}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}
