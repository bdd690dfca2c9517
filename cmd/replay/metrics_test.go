package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/noise"
	"github.com/llmbench/llmbench/rawlog"
)

// The first Ctrl-C ends a run promptly even when its metrics endpoints never answer: the
// server's (--server-metrics-url) and a DCGM exporter's (--gpu-telemetry=URL). The scrape
// in flight at the interruption is abandoned for the final one, which gets one scrape
// timeout (the interval's, at least 2 s), so replay exits within that of the signal, plus
// the in-flight requests (100 ms each, inside the grace period), plus the machine's own
// scheduling noise meanwhile. The signal goes out just as a scrape begins, when waiting
// for it would cost a whole timeout more.
func TestSIGINTWithHostileMetrics(t *testing.T) {
	const planned = 2000
	finished := make(chan struct{}, planned)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", http.NotFound)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 5 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
		finished <- struct{}{}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	scrapes := make(chan struct{}, 1000)
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes <- struct{}{}
		select { // a page that takes longer than any timeout
		case <-r.Context().Done():
		case <-time.After(60 * time.Second):
		}
	})
	metrics, dcgm := httptest.NewServer(hang), httptest.NewServer(hang)
	defer metrics.Close()
	defer dcgm.Close()
	plan := writePlan(t, planned, 10*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "run")
	cmd, exited, stderr := startReplayUntil(t, finished, "--plan", plan, "--url", srv.URL, "--output-dir", dir, "--workers", "1",
		"--benchmark-grace-period", "60", "--server-metrics-interval", "5s", "--server-metrics-url", metrics.URL+"/metrics?token=s3cret", "--gpu-telemetry="+dcgm.URL+"/metrics")
	for len(scrapes) > 0 {
		<-scrapes
	}
	select {
	case <-scrapes: // a scrape has just begun
	case <-time.After(30 * time.Second):
		t.Fatalf("no scrape within 30 s: %s", stderr.String())
	}
	s := noise.Start(-1)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("replay still running 60 s after SIGINT: %s", stderr.String())
	}
	took := time.Since(sent)
	late := s.Stop()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, stderr %s", err, stderr.String())
	}
	// A 5 s interval makes the scrape timeout 5 s: waiting for the abandoned scrape too would
	// cost a whole timeout more (10 s), so the bound separates the two by seconds, while
	// the rest of the exit (workers' final records, run.json) gets 2.5 s, which a loaded
	// machine under -race was seen to need 1.1–1.5 s of.
	const timeout = 5 * time.Second
	bound := timeout + 2500*time.Millisecond + 2*late.Max()
	t.Logf("SIGINT to exit: %v (bound %v; the machine's worst sleep lateness %v)", took, bound, late.Max())
	if took > bound {
		t.Errorf("replay exited %v after SIGINT, over one %v scrape timeout (bound %v): %s", took, timeout, bound, stderr.String())
	}
	m, err := rawlog.ReadManifest(dir)
	if err != nil || m.Status != rawlog.StatusInterrupted || m.Counts.Completed == 0 || m.Counts.Failed != 0 {
		t.Fatalf("run.json %+v %v", m, err)
	}
	if len(m.ServerMetricsNotes) == 0 {
		t.Errorf("run.json says nothing of the endpoints that never answered")
	}
	raw, _ := os.ReadFile(filepath.Join(dir, rawlog.ManifestName))
	if strings.Contains(string(raw), "s3cret") || strings.Contains(stderr.String(), "s3cret") {
		t.Errorf("the metrics URL's token is in run.json or on the console: %s", stderr.String())
	}
}
