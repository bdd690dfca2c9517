package servermetrics

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A metrics or DCGM endpoint that answers non-2xx shows the server's own message (llama.cpp's
// /metrics without --metrics says how to turn it on), redacted, once per run of failures,
// not a bare "HTTP 501"; the same goes for a 404.
func TestScrapeFailureShowsServerMessage(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/llama/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotImplemented)
		w.Write([]byte(`{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with ` + "`--metrics`" + `","type":"not_supported_error"}}`))
	})
	mux.HandleFunc("/dcgm/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("exporter starting: see http://h/x?token=s3cr3tT0K\nsecond line"))
	})
	mux.HandleFunc("/gone/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"detail":"Not Found"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var buf bytes.Buffer
	out, err := NewWriter(&buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	cfg := Config{
		Targets:  []Target{{srv.URL + "/llama/metrics", RoleServer}, {srv.URL + "/dcgm/metrics", RoleGPU}, {srv.URL + "/gone/metrics", RoleServer}},
		Interval: 10 * time.Millisecond, Out: out,
		Notice: func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() },
	}
	stop := make(chan struct{})
	go func() { time.Sleep(80 * time.Millisecond); close(stop) }()
	if err := Run(cfg, time.Now(), stop); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{
		"/llama/metrics: HTTP 501: \"This server does not support metrics endpoint. Start it with `--metrics`\" (still tried every interval",
		"/dcgm/metrics: HTTP 503: \"exporter starting: see http://h/x?token=REDACTED\"",
		"/gone/metrics: not Prometheus text or OpenMetrics: HTTP 404: \"Not Found\", nothing served there",
	} {
		if strings.Count(joined, want) != 1 {
			t.Errorf("want once %q in the notices:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "s3cr3tT0K") || strings.Contains(joined, "second line") {
		t.Errorf("notices leak the secret or more than the first line:\n%s", joined)
	}
	f, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var noted []string
	for _, n := range f.Notes {
		noted = append(noted, n.Message)
	}
	if !strings.Contains(strings.Join(noted, "\n"), "Start it with `--metrics`") {
		t.Errorf("server_metrics.jsonl notes lack the hint: %q", noted)
	}
}
