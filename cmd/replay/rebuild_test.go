package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// The worker logs of a real run hold what run.json's rebuild needs: RebuildManifest gives
// back its plan, start, workers and shard sizes.
func TestLogsRebuildRunJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	plan := writePlan(t, 5, 0)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "--plan", plan, "--url", srv.URL, "--output-dir", dir,
		"--workers", "2", "--no-pin", "--no-gpu-telemetry")
	cmd.Env = append(os.Environ(), "LLMBENCH_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rawlog.RebuildManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.PlanHash != m.PlanHash || got.PlanPath != m.PlanPath || got.StartUnixNs != m.StartUnixNs || len(got.Workers) != len(m.Workers) {
		t.Fatalf("rebuilt %+v\nrun.json %+v", got, m)
	}
	for i, w := range m.Workers {
		g := got.Workers[i]
		if g.ID != w.ID || g.Log != w.Log || g.Planned != w.Planned || g.PID != w.PID || g.CPU != w.CPU {
			t.Errorf("worker %d rebuilt as %+v; run.json has %+v", i, g, w)
		}
	}
	r, err := rawlog.Open(filepath.Join(dir, m.Workers[1].Log))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); h.Workers != 2 || h.Planned != m.Workers[1].Planned {
		t.Errorf("worker 1 header %+v", h)
	}
}
