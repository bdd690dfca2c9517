// Package servertimetest builds test runs whose server reported known phases: a run
// directory (plan, one worker's raw log, run.json with a trace key) and the server's
// vLLM-shaped spans for it, as the Collector's file exporter writes them. For tests of the
// join (analyze/servertime) and of the commands that read it; it imports the formats'
// packages and pdata, never analyze.
package servertimetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servertrace"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const (
	us = int64(1000)
	ms = 1000 * us
)

// Words counts tokens as words (analyze.Options.Tokenizer for a fixture's run).
type Words struct{}

// Count is the number of words of s.
func (Words) Count(s string) int { return len(strings.Fields(s)) }

// Fixture is a streamed run of N profile requests, one worker, whose server reported for
// request i a Queue, a Prefill and a Decode time (ns), and a TTFT of queue + prefill; our
// TTFT is the server's plus Outside. Key is the run's trace key (none with NoKey).
type Fixture struct {
	N                      int
	Queue, Prefill, Decode []int64
	Outside                []int64
	Key                    tracectx.Key
	NoKey                  bool
	start                  int64 // the run's wall-clock zero
	planFile               string
}

// New is a fixture of n requests: queue times of 0.123456 ms plus 0 to 40 ms, prefill 5 ms
// and more, decode 30 ms and more, 2 to 3 ms outside the server.
func New(n int) *Fixture {
	f := &Fixture{N: n, start: 1_767_225_600_000_000_000, Key: tracectx.NewKey("plan", 1, "")}
	for i := 0; i < n; i++ {
		f.Queue = append(f.Queue, int64(i%5)*10*ms+123_456)
		f.Prefill = append(f.Prefill, 5*ms+int64(i)*7*us)
		f.Decode = append(f.Decode, 30*ms+int64(i)*us)
		f.Outside = append(f.Outside, 2*ms+int64(i%3)*500*us)
	}
	return f
}

func (f *Fixture) send(i int) int64 { return 10*ms + int64(i)*50*ms }

// ServerTTFT is the server's TTFT of request i (ns).
func (f *Fixture) ServerTTFT(i int) int64 { return f.Queue[i] + f.Prefill[i] }

// Write writes the plan, the worker's log and run.json under dir.
func (f *Fixture) Write(t testing.TB, dir string) {
	t.Helper()
	f.planFile = filepath.Join(dir, "plan.plan")
	w, err := mmapds.Create(f.planFile)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < f.N; i++ {
		r := mmapds.Record{SendOffsetNs: int64(i) * 50 * ms, DelayNs: -1, Session: uint32(i), ISL: 3, OSL: 4, Phase: mmapds.PhaseProfile}
		if err := w.Add(r, []byte(fmt.Sprintf(`{"model":"m","i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.Close(&mmapds.Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST", Model: "m",
		Streaming: true, ProfileCount: f.N, Tokenizer: "builtin", OfferedRate: 20})
	if err != nil {
		t.Fatal(err)
	}
	hash := fmt.Sprintf("%x", h)
	lf, err := os.Create(filepath.Join(dir, "worker-000.rawlog"))
	if err != nil {
		t.Fatal(err)
	}
	lw, err := rawlog.NewWriter(lf, rawlog.Header{Worker: 0, PID: 100, PlanHash: hash, StartUnixNs: f.start, PlanPath: f.planFile, Planned: f.N, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < f.N; i++ {
		send := f.send(i)
		ttft := f.ServerTTFT(i) + f.Outside[i]
		q := &rawlog.Request{Index: uint32(i), Outcome: rawlog.OutcomeCompleted, Status: 200,
			IntendedNs: int64(i) * 50 * ms, ReadyNs: send, WriteStartNs: send, WriteEndNs: send + 20*us, HeaderNs: send + ttft/2,
			ConnectStartNs: -1, ConnectEndNs: -1}
		add := func(at int64, s string) {
			q.Body = append(q.Body, s...)
			q.ReadNs = append(q.ReadNs, at)
			q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
		}
		add(send+ttft/2, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
		for k := 0; k < 4; k++ {
			add(send+ttft+int64(k)*f.Decode[i]/3, "data: {\"choices\":[{\"delta\":{\"content\":\" w\"}}]}\n\n")
		}
		last := send + ttft + f.Decode[i] + 100*us
		add(last, "data: [DONE]\n\n")
		q.EndNs = last + 10*us
		if err := lw.WriteRequest(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(rawlog.Footer{TimeNs: int64(f.N)*50*ms + 100*ms, Requests: f.N, Status: "complete"}); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	m := &rawlog.Manifest{Tool: "llmbench", ToolVersion: "test", GoVersion: "go", PlanHash: hash, PlanPath: f.planFile,
		URLs: []string{"http://127.0.0.1:8000"}, StartUnixNs: f.start, StartTime: "2026-01-01T00:00:00Z",
		EndUnixNs: f.start + int64(f.N)*50*ms + 100*ms, Host: "testhost", Kernel: "linux", CommandLine: []string{"replay"},
		Status:  rawlog.StatusComplete,
		Workers: []rawlog.WorkerInfo{{ID: 0, PID: 100, Log: "worker-000.rawlog", Planned: f.N, Status: "complete"}}}
	m.Counts.Planned = f.N
	if !f.NoKey {
		m.TraceKey = f.Key.String()
	}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
}

// Spans are the server's spans for the fixture: one vLLM llm_request span per request but
// those in skip; request 1 also has a router span (no phase attributes) read before its
// engine span; foreign spans of another run's traces follow. The server's clock runs 3 s
// ahead and its span starts 1 ms after our write began: a clock offset of 3001 ms.
func (f *Fixture) Spans(skip map[int]bool, foreign int) ptrace.Traces {
	td := ptrace.NewTraces()
	router := td.ResourceSpans().AppendEmpty()
	router.Resource().Attributes().PutStr("service.name", "router")
	rss := router.ScopeSpans().AppendEmpty().Spans()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "vllm")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	sec := func(ns int64) float64 { return float64(ns) / 1e9 }
	for i := 0; i < f.N; i++ {
		if skip[i] {
			continue
		}
		tid := pcommon.TraceID(f.Key.TraceID(uint32(i)))
		if i == 1 {
			r := rss.AppendEmpty()
			r.SetName("route")
			r.SetKind(ptrace.SpanKindServer)
			r.SetTraceID(tid)
			r.SetSpanID(pcommon.SpanID{1, 2, 3})
			r.Attributes().PutStr("llm_d.endpoint", "pod-7")
		}
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		s.SetKind(ptrace.SpanKindServer)
		s.SetTraceID(tid)
		s.SetSpanID(pcommon.SpanID{7: byte(i + 1)})
		s.SetParentSpanID(pcommon.SpanID(f.Key.SpanID(uint32(i))))
		// The server's clock runs 3 s ahead; its span starts 1 ms after our write began.
		start := f.start + f.send(i) + 3_000*ms + ms
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(start + f.ServerTTFT(i) + f.Decode[i]))
		a := s.Attributes()
		a.PutStr("gen_ai.response.model", "m")
		a.PutInt("gen_ai.usage.prompt_tokens", 3)
		a.PutDouble("gen_ai.latency.time_in_queue", sec(f.Queue[i]))
		a.PutDouble("gen_ai.latency.time_in_model_prefill", sec(f.Prefill[i]))
		a.PutDouble("gen_ai.latency.time_in_model_decode", sec(f.Decode[i]))
		a.PutDouble("gen_ai.latency.time_to_first_token", sec(f.ServerTTFT(i)))
		a.PutDouble("gen_ai.latency.e2e", sec(f.ServerTTFT(i)+f.Decode[i]))
	}
	other := tracectx.NewKey("another run", 2, "")
	for k := 0; k < foreign; k++ {
		s := spans.AppendEmpty()
		s.SetName("llm_request")
		s.SetTraceID(pcommon.TraceID(other.TraceID(uint32(k))))
		s.SetSpanID(pcommon.SpanID{0: 9, 7: byte(k + 1)})
	}
	return td
}

// WriteCollectorFile writes td as the Collector's file exporter does (format json: one
// export request per line), one request per resource.
func WriteCollectorFile(t testing.TB, path string, td ptrace.Traces) {
	t.Helper()
	var b []byte
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		one := ptrace.NewTraces()
		td.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
		line, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteRunFile writes td as the run's trace receiver keeps it: dir's server_traces.jsonl,
// one line (servertrace.Line) per resource, received over OTLP/HTTP JSON.
func WriteRunFile(t testing.TB, dir string, td ptrace.Traces) {
	t.Helper()
	var b []byte
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		one := ptrace.NewTraces()
		td.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
		otlp, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
		if err != nil {
			t.Fatal(err)
		}
		line, err := json.Marshal(servertrace.Line{FormatVersion: servertrace.FormatVersion, ReceivedUnixNs: int64(i + 1),
			Transport: servertrace.TransportHTTPJSON, Traces: otlp})
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, servertrace.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
