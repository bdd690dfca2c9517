package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmbench/llmbench/rawlog"
)

// otlpReceiver is an OTLP/HTTP collector: when each push to /v1/metrics arrived, and the
// metric names it carried, decoded with the OTLP proto types.
type otlpReceiver struct {
	mu    sync.Mutex
	at    []time.Time
	names map[string]int
	bad   []string
}

func startOTLP(t *testing.T) (*otlpReceiver, string) {
	t.Helper()
	rc := &otlpReceiver{names: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := &colmetrics.ExportMetricsServiceRequest{}
		err := proto.Unmarshal(b, req)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if r.URL.Path != "/v1/metrics" || err != nil {
			rc.bad = append(rc.bad, r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.at = append(rc.at, time.Now())
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					rc.names[m.Name]++
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// TestOtelDuringRun: with --otel-url, an OTLP/HTTP receiver gets several pushes to
// /v1/metrics while a 6 s run lasts (before its end, by run.json), carrying the GenAI
// semantic-convention names; the run itself is unaffected (exit 0).
func TestOtelDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s run")
	}
	rc, url := startOTLP(t)
	mock := faultServer(t, func(int64) bool { return false })
	r := runProfile(t, mock, "--concurrency", "2", "--benchmark-duration", "6", "--benchmark-grace-period", "5",
		"--otel-url", url, "--otel-resource-attributes", "team=perf")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	m, err := filepath.Glob(filepath.Join(r.dir, "*", rawlog.ManifestName))
	if err != nil || len(m) != 1 {
		t.Fatalf("run.json: %v %v", m, err)
	}
	man, err := rawlog.ReadManifest(filepath.Dir(m[0]))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Unix(0, man.EndUnixNs)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	during := 0
	for _, at := range rc.at {
		if at.Before(end) {
			during++
		}
	}
	t.Logf("%d pushes, %d before the run ended; names %v", len(rc.at), during, rc.names)
	if during < 3 {
		t.Errorf("%d pushes during the run, want several", during)
	}
	for _, n := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage",
		"gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk", "aiperf.timing.requests.sent"} {
		if rc.names[n] == 0 {
			t.Errorf("no push carried %s", n)
		}
	}
	if len(rc.bad) > 0 {
		t.Errorf("bad pushes: %v", rc.bad)
	}
	if strings.Contains(r.stderr, "otel-url") {
		t.Errorf("a warning with a working collector:\n%s", r.stderr)
	}
}

// TestOtelUnreachable: a collector nobody listens on is one warning line; the run passes.
func TestOtelUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	mock := faultServer(t, func(int64) bool { return false })
	r := runProfile(t, mock, "--concurrency", "2", "--request-count", "8", "--otel-url", url)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "--otel-url"); n != 1 {
		t.Errorf("%d lines about --otel-url, want one warning:\n%s", n, r.stderr)
	}
}
