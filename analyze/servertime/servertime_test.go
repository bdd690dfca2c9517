package servertime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	st "github.com/llmbench/llmbench/analyze/servertime/servertimetest"
	"github.com/llmbench/llmbench/servertrace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// analyse analyses the fixture's run joined to the traces file (servertrace's default when
// ""), as export.Run does.
func analyse(t *testing.T, dir, file string) (*analyze.Summary, []byte) {
	t.Helper()
	reg := analyze.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	j, err := Open([]string{dir}, file)
	if err != nil {
		t.Fatal(err)
	}
	o := analyze.Options{RunDirs: []string{dir}, Tokenizer: st.Words{}, TempDir: t.TempDir(), Metrics: reg}
	if j != nil {
		m.Bind(j)
		o.RecordMetadata = j.AppendMetadata
	}
	var rec bytes.Buffer
	s, err := analyze.Analyze(o, &rec)
	if err != nil {
		t.Fatal(err)
	}
	if j != nil {
		s.ServerTraces = j.Counts()
	}
	return s, rec.Bytes()
}

type record struct {
	Metadata struct {
		RequestIndex int    `json:"request_index"`
		TraceID      string `json:"trace_id"`
		ServerSpan   *struct {
			Name       string         `json:"name"`
			Layout     string         `json:"layout"`
			OtherSpans int            `json:"other_spans"`
			Attributes map[string]any `json:"attributes"`
		} `json:"server_span"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value any `json:"value"`
	} `json:"metrics"`
}

func records(t *testing.T, b []byte) map[int]record {
	t.Helper()
	out := map[int]record{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		out[r.Metadata.RequestIndex] = r
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(g) && i < len(w); i++ {
			if g[i] != w[i] {
				t.Fatalf("%s differs from the golden file at line %d (go test -run %s -update rewrites it):\ngot  %s\nwant %s", name, i+1, t.Name(), g[i], w[i])
			}
		}
		t.Fatalf("%s: %d lines, the golden file %d (go test -run %s -update rewrites it)", name, len(g), len(w), t.Name())
	}
}

// TestJoin joins a run to a Collector file exporter's spans: every request with a span has
// the server's phases exactly, TTFT = server TTFT + ttft_outside_server, the router's span
// loses to the engine's, foreign spans are unmatched; the records and the console are
// golden.
func TestJoin(t *testing.T) {
	f := st.New(12)
	dir := t.TempDir()
	f.Write(t, dir)
	traces := filepath.Join(t.TempDir(), "otel-traces.json")
	st.WriteCollectorFile(t, traces, f.Spans(map[int]bool{4: true}, 3))
	s, rec := analyse(t, dir, traces)

	got := *s.ServerTraces
	want := analyze.TraceJoin{Source: traces, Layout: servertrace.LayoutCollectorJSON, Spans: 12 + 3, Matched: 12, Unmatched: 3, Joined: 11, WithoutSpan: 1}
	for i := 0; i < f.N; i++ {
		if i != 4 {
			sp := &want.Split
			sp.Requests++
			sp.QueueNs, sp.PrefillNs, sp.OutsideNs = sp.QueueNs+f.Queue[i], sp.PrefillNs+f.Prefill[i], sp.OutsideNs+f.Outside[i]
			sp.TTFTNs += f.ServerTTFT(i) + f.Outside[i]
		}
	}
	if got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	rs := records(t, rec)
	if len(rs) != f.N {
		t.Fatalf("%d records", len(rs))
	}
	for i := 0; i < f.N; i++ {
		r := rs[i]
		if r.Metadata.TraceID != hexID(f.Key.TraceID(uint32(i))) {
			t.Fatalf("request %d: trace_id %q", i, r.Metadata.TraceID)
		}
		v := func(tag string) (float64, bool) { m, ok := r.Metrics[tag]; x, _ := m.Value.(float64); return x, ok }
		if i == 4 {
			if _, ok := v(TagQueue); ok || r.Metadata.ServerSpan != nil {
				t.Fatalf("request 4 has no span, got %+v", r)
			}
			continue
		}
		ms := func(ns int64) float64 { return float64(ns) / 1e6 }
		for tag, want := range map[string]float64{TagQueue: ms(f.Queue[i]), TagPrefill: ms(f.Prefill[i]), TagDecode: ms(f.Decode[i]),
			TagTTFT: ms(f.ServerTTFT(i)), TagE2E: ms(f.ServerTTFT(i) + f.Decode[i]), TagOutside: ms(f.Outside[i]), TagClockSkew: 3001} {
			if got, ok := v(tag); !ok || math.Abs(got-want) > 1e-6 {
				t.Fatalf("request %d: %s = %v (%v), want %v", i, tag, got, ok, want)
			}
		}
		ttft, _ := v("time_to_first_token")
		server, _ := v(TagTTFT)
		outside, _ := v(TagOutside)
		if math.Abs(ttft-(server+outside)) > 1e-9 {
			t.Fatalf("request %d: TTFT %v != server %v + outside %v", i, ttft, server, outside)
		}
		sp := r.Metadata.ServerSpan
		if sp == nil || sp.Name != "llm_request" || sp.Layout != "vllm" || sp.Attributes["gen_ai.response.model"] != "m" {
			t.Fatalf("request %d: server_span %+v", i, sp)
		}
		if want := map[bool]int{true: 1, false: 0}[i == 1]; sp.OtherSpans != want {
			t.Fatalf("request %d: other_spans %d, want %d", i, sp.OtherSpans, want)
		}
	}
	var con bytes.Buffer
	if err := output.WriteConsole(&con, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "join.jsonl.golden", rec)
	golden(t, "join.console.golden", bytes.ReplaceAll(con.Bytes(), []byte(traces), []byte("TRACES")))
	var js bytes.Buffer
	if err := output.WriteAIPerfJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Queue struct {
			Unit  string  `json:"unit"`
			Count int     `json:"count"`
			P50   float64 `json:"p50"`
		} `json:"server_queue_time"`
		LLMBench struct {
			ServerTraces map[string]any `json:"server_traces"`
		} `json:"llmbench"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Queue.Unit != "ms" || doc.Queue.Count != 11 || doc.LLMBench.ServerTraces["requests_without_span"] != 1.0 {
		t.Fatalf("JSON: %+v", doc)
	}
}

// TestJoinRunFile reads the run's own server_traces.jsonl when no file is given.
func TestJoinRunFile(t *testing.T) {
	f := st.New(4)
	dir := t.TempDir()
	f.Write(t, dir)
	otlp, err := jsonMarshal(f.Spans(nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(servertrace.Line{FormatVersion: servertrace.FormatVersion, ReceivedUnixNs: 5, Transport: servertrace.TransportHTTPJSON, Traces: otlp})
	if err := os.WriteFile(filepath.Join(dir, servertrace.FileName), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := analyse(t, dir, "")
	if c := s.ServerTraces; c == nil || c.Layout != servertrace.LayoutRun || c.Joined != 4 || c.Matched != 5 {
		t.Fatalf("counts %+v", c)
	}
}

// TestNoTraces: a run without trace context and no file has no join and no server metric
// values; one with trace context but no spans still names each request's trace id.
func TestNoTraces(t *testing.T) {
	f := st.New(3)
	f.NoKey = true
	dir := t.TempDir()
	f.Write(t, dir)
	s, rec := analyse(t, dir, "")
	if s.ServerTraces != nil || bytes.Contains(rec, []byte("trace_id")) {
		t.Fatalf("a run without traces: %+v", s.ServerTraces)
	}
	for _, r := range s.Results {
		if r.Origin == analyze.OriginServer {
			t.Fatalf("server metric %s has values", r.Tag)
		}
	}
	if _, err := Open([]string{dir}, filepath.Join(dir, "x.json")); err == nil || !strings.Contains(err.Error(), "no trace_key") {
		t.Fatalf("a traces file for a run without trace context: %v", err)
	}

	f = st.New(3)
	dir = t.TempDir()
	f.Write(t, dir)
	s, rec = analyse(t, dir, "")
	if c := s.ServerTraces; c == nil || c.Source != "" || c.WithoutSpan != 3 {
		t.Fatalf("counts %+v", c)
	}
	if n := bytes.Count(rec, []byte(`"trace_id":"`)); n != 3 {
		t.Fatalf("%d trace ids in the records", n)
	}
}

func TestOpenErrors(t *testing.T) {
	f := st.New(2)
	dir := t.TempDir()
	f.Write(t, dir)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"resourceSpans\":[]}\nnope\n"), 0o644)
	for file, want := range map[string]string{
		filepath.Join(dir, "absent.json"): "--server-traces: open",
		bad:                               "bad.json:2: not a JSON object",
	} {
		if _, err := Open([]string{dir}, file); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", file, err, want)
		}
	}
}

func hexID(id [16]byte) string { return fmt.Sprintf("%x", id[:]) }

func jsonMarshal(td ptrace.Traces) ([]byte, error) {
	return (&ptrace.JSONMarshaler{}).MarshalTraces(td)
}

// TestBeyondPlan: a span carrying this run's key but an index past its planned requests
// belongs to no request (unmatched); a string-valued attribute holding a number is read.
func TestBeyondPlan(t *testing.T) {
	f := st.New(3)
	dir := t.TempDir()
	f.Write(t, dir)
	td := f.Spans(map[int]bool{1: true, 2: true}, 0)
	spans := td.ResourceSpans().At(1).ScopeSpans().At(0).Spans()
	spans.At(0).Attributes().PutStr("gen_ai.latency.time_in_queue", "0.25")
	far := spans.AppendEmpty()
	far.SetName("llm_request")
	far.SetTraceID(pcommon.TraceID(f.Key.TraceID(50)))
	traces := filepath.Join(t.TempDir(), "t.json")
	st.WriteCollectorFile(t, traces, td)
	s, rec := analyse(t, dir, traces)
	if c := s.ServerTraces; c.Matched != 1 || c.Unmatched != 1 || c.Joined != 1 || c.WithoutSpan != 2 {
		t.Fatalf("counts %+v", c)
	}
	if !bytes.Contains(rec, []byte(`"server_queue_time":{"value":250.0,"unit":"ms"}`)) {
		t.Fatal("the string attribute was not read as 250 ms")
	}
}

// BenchmarkJoin is the analysis of a 5000-request run without its spans and joined to them
// (reading the Collector file included): the join's cost as a ratio of the two.
func BenchmarkJoin(b *testing.B) {
	f := st.New(5000)
	dir := b.TempDir()
	f.Write(b, dir)
	traces := filepath.Join(b.TempDir(), "t.json")
	st.WriteCollectorFile(b, traces, f.Spans(nil, 0))
	for _, c := range []struct {
		name string
		join bool
	}{{"plain", false}, {"joined", true}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				reg := analyze.NewRegistry()
				o := analyze.Options{RunDirs: []string{dir}, Tokenizer: st.Words{}, TempDir: b.TempDir(), Metrics: reg}
				if c.join {
					m, err := Register(reg)
					if err != nil {
						b.Fatal(err)
					}
					j, err := Open([]string{dir}, traces)
					if err != nil {
						b.Fatal(err)
					}
					m.Bind(j)
					o.RecordMetadata = j.AppendMetadata
				}
				if _, err := analyze.Analyze(o, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
