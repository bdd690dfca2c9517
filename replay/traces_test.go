package replay

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/replay/internal/testserver"
	"github.com/llmbench/llmbench/servertrace"
)

// TestTraceparentOnTheWire checks the header each client sends: present on every request
// when asked (or when a receiver listens), naming the request's own trace under run.json's
// trace_key, and absent otherwise.
func TestTraceparentOnTheWire(t *testing.T) {
	const n = 40
	ps := singleTurn(n, job{N: 3, Stream: true}, nil)
	ps.meta.Concurrency = 8
	plan := ps.write(t, t.TempDir())
	for _, client := range []string{ClientLoop, ClientNet} {
		for _, mode := range []string{TraceparentOn, TraceparentAuto, TraceparentOff, "receiver"} {
			t.Run(client+"/"+mode, func(t *testing.T) {
				srv := newTestServer(t)
				srv.keep = true
				o := testOptions(t, plan, srv.URL)
				o.Client, o.Workers, o.Traceparent = client, 2, mode
				// Two workers whatever the CPUs: what is checked is the header, not the pinning
				// (a loaded machine or an earlier test's affinity may leave one CPU).
				o.NoPin = true
				var notes strings.Builder
				o.Notice = &notes
				if mode == "receiver" {
					o.Traceparent, o.TraceReceiver, o.TraceGrace = "", "127.0.0.1:0", 1
				}
				m := runReplay(t, o)
				if m.Counts.Completed != n {
					t.Fatalf("counts %+v", m.Counts)
				}
				if mode == TraceparentAuto || mode == TraceparentOff {
					for _, h := range srv.headers {
						if h.Get(tracectx.HeaderName) != "" {
							t.Fatalf("traceparent %q sent with --traceparent %s", h.Get(tracectx.HeaderName), mode)
						}
					}
					if m.TraceKey != "" || m.ServerTraces != nil {
						t.Fatalf("trace_key %q, server_traces %+v", m.TraceKey, m.ServerTraces)
					}
					return
				}
				key, err := tracectx.ParseKey(m.TraceKey)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[uint32]bool{}
				for _, h := range srv.headers {
					v := h.Values(tracectx.HeaderName)
					if len(v) != 1 || len(v[0]) != tracectx.TraceparentLen {
						t.Fatalf("traceparent %q", v)
					}
					id, err := tracectx.ParseTraceID(v[0][3:35])
					if err != nil {
						t.Fatal(err)
					}
					i, ok := key.Index(id)
					if !ok || i >= n || seen[i] {
						t.Fatalf("traceparent %s: plan index %d, %v (seen %v)", v[0], i, ok, seen[i])
					}
					seen[i] = true
					if want := string(key.AppendTraceparent(nil, i)); v[0] != want {
						t.Fatalf("request %d: traceparent %s, want %s", i, v[0], want)
					}
				}
				if len(seen) != n {
					t.Fatalf("%d of %d requests carried a traceparent", len(seen), n)
				}
				if mode == "receiver" {
					st := m.ServerTraces
					if st == nil || st.SpansReceived != 0 || st.GRPCEndpoint == "" || st.HTTPEndpoint == "" || st.File != "" {
						t.Fatalf("server_traces %+v", st)
					}
					if !strings.Contains(notes.String(), "the trace receiver got no spans") {
						t.Fatalf("no warning in %q", notes.String())
					}
					if _, err := os.Stat(filepath.Join(o.OutputDir, servertrace.FileName)); !os.IsNotExist(err) {
						t.Fatalf("an empty %s left: %v", servertrace.FileName, err)
					}
				}
			})
		}
	}
}

// TestTraceReceiverBindError: a port that cannot be bound ends the run before anything is
// sent or written, naming the flag.
func TestTraceReceiverBindError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	plan := singleTurn(2, job{N: 1}, nil).write(t, t.TempDir())
	srv := newTestServer(t)
	o := testOptions(t, plan, srv.URL)
	o.TraceReceiver = l.Addr().String()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Run()
	if m != nil || err == nil || !strings.Contains(err.Error(), "--trace-receiver "+l.Addr().String()) || srv.requests.Load() != 0 {
		t.Fatalf("manifest %v, error %v, %d requests", m, err, srv.requests.Load())
	}
	if _, err := os.Stat(o.OutputDir); !os.IsNotExist(err) {
		t.Fatalf("run directory left: %v", err)
	}
}

// TestTraceOptions checks the options' errors name their flags.
func TestTraceOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Traceparent: "yes"}, `--traceparent "yes"`},
		{Options{TraceReceiver: "4317"}, `--trace-receiver "4317"`},
		{Options{TraceReceiver: ":65535"}, "--trace-receiver :65535: port 65535"},
		{Options{TraceReceiverHTTP: ":4318"}, "--trace-receiver-http :4318: needs --trace-receiver"},
		{Options{TraceReceiver: ":4317", TraceReceiverHTTP: "x:y"}, `--trace-receiver-http "x:y"`},
		{Options{TraceReceiver: ":4317", TraceGrace: -1}, "--trace-receiver-grace"},
	} {
		err := c.o.normalizeTraces()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	o := Options{TraceReceiver: "0.0.0.0:4317"}
	if err := o.normalizeTraces(); err != nil || o.TraceReceiverHTTP != "0.0.0.0:4318" || o.TraceGrace != DefaultTraceGrace || !o.sendsTraceparent() {
		t.Fatalf("%+v, %v", o, err)
	}
}

// TestTraceparentSteadyStateAllocs: with the traceparent on, a worker's steady state still
// allocates nothing per request, on both clients (as TestWorkerSteadyStateAllocs).
func TestTraceparentSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	addr := testserver.RawSSE(t, 16)
	for _, client := range []string{ClientNet, ClientLoop} {
		t.Run(client, func(t *testing.T) {
			mallocs := func(n int) uint64 {
				ps := singleTurn(n, job{}, nil)
				ps.meta.Concurrency = 4
				plan := ps.write(t, t.TempDir())
				cfg := workerConfig{Plan: plan, URLs: []string{"http://" + addr}, Workers: 1, CPU: -1, Client: client,
					RequestTimeoutNs: int64(10 * time.Second), Log: filepath.Join(t.TempDir(), "w.rawlog"), Traceparent: true}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				res, err := runWorker(cfg, make(chan string), inproc{start: time.Now().UnixNano()})
				runtime.ReadMemStats(&after)
				if err != nil || res.Counts.Completed != n {
					t.Fatalf("%v %+v", err, res.Counts)
				}
				return after.Mallocs - before.Mallocs
			}
			mallocs(200)
			small, large := mallocs(300), mallocs(3000)
			perRequest := (float64(large) - float64(small)) / 2700
			t.Logf("allocations with traceparent: %d for 300 requests, %d for 3000: %.3f per extra request", small, large, perRequest)
			if perRequest > 0.5 {
				t.Fatalf("%.2f allocations per request", perRequest)
			}
		})
	}
}

// BenchmarkWorkerRequestTraceparent is BenchmarkWorkerRequest with and without the
// traceparent, in one run, for the ratio of their per-request costs.
func BenchmarkWorkerRequestTraceparent(b *testing.B) {
	addr := testserver.RawSSE(b, 16)
	for _, client := range []string{ClientNet, ClientLoop} {
		for _, traced := range []bool{false, true} {
			name := client + "/plain"
			if traced {
				name = client + "/traceparent"
			}
			b.Run(name, func(b *testing.B) {
				ps := singleTurn(b.N, job{}, nil)
				ps.meta.Concurrency = 4
				plan := ps.write(b, b.TempDir())
				cfg := workerConfig{Plan: plan, URLs: []string{"http://" + addr}, Workers: 1, CPU: -1, Client: client,
					RequestTimeoutNs: int64(10 * time.Second), Log: filepath.Join(b.TempDir(), "w.rawlog"), Traceparent: traced}
				b.ReportAllocs()
				b.ResetTimer()
				res, err := runWorker(cfg, make(chan string), inproc{start: time.Now().UnixNano()})
				if err != nil || res.Counts.Completed != b.N {
					b.Fatalf("%v %+v", err, res.Counts)
				}
			})
		}
	}
}
