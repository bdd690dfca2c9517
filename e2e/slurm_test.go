package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// TestSlurm runs deploy/slurm/llmbench.sbatch on a real Slurm cluster (make e2e-slurm starts
// a one-machine one with deploy/slurm/local-cluster.sh): `sbatch --nodes=1 --ntasks=2` starts
// two tasks on one node, each replays its shard (from SLURM_PROCID/SLURM_NTASKS) against
// mockllm, the shards meet at the rendezvous (the script's default) and start at one instant,
// each task's workers are pinned to CPUs of its own (SLURM_LOCALID's share of the node), and
// the script's analysis merges them. Skipped unless LLMBENCH_E2E_SLURM=1 and SLURM_CONF is set.
func TestSlurm(t *testing.T) {
	if os.Getenv("LLMBENCH_E2E_SLURM") != "1" || os.Getenv("SLURM_CONF") == "" {
		t.Skip("needs a Slurm cluster: make e2e-slurm")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("two tasks with a CPU each need 2 CPUs")
	}
	srv := startMock(t, mockTiming...)
	dir := t.TempDir()
	const sessions, turns = 8, 2
	planPath := compile(t, dir, "--model", "mock", "--endpoint-type", "chat", "--streaming", "--isl", "16", "--osl", "4",
		"--extra-inputs", "ignore_eos:true", "--conversation-turn-mean", "2", "--num-sessions", "8",
		"--request-rate", "40", "--arrival-pattern", "constant", "--random-seed", "9")
	script, err := filepath.Abs("../deploy/slurm/llmbench.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sbatch", "--wait", "--nodes=1", "--ntasks=2", "--output="+filepath.Join(dir, "job.out"), script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAN="+planPath, "URL="+srv.URL, "LLMBENCH_BIN="+filepath.Dir(bin.replay),
		"RESULTS="+dir, "RUN_ID=slurm1", "RENDEZVOUS_TIMEOUT=60s", "REPLAY_ARGS=--no-gpu-telemetry --ui-type none")
	out, err := cmd.CombinedOutput()
	job, _ := os.ReadFile(filepath.Join(dir, "job.out"))
	if err != nil {
		t.Fatalf("sbatch: %v\n%s\njob output:\n%s", err, out, job)
	}
	root := filepath.Join(dir, "slurm1")
	seen := 0
	var start int64
	cpuOf := map[int]int{} // CPU -> shard
	for i := range 2 {
		m, err := rawlog.ReadManifest(filepath.Join(root, fmt.Sprintf("shard-%d", i)))
		if err != nil {
			t.Fatalf("%v\njob output:\n%s", err, job)
		}
		if m.Shard == nil || m.Shard.Index != i || m.Shard.Count != 2 || m.Status != rawlog.StatusComplete {
			t.Fatalf("shard %d: %+v status %s\n%s", i, m.Shard, m.Status, job)
		}
		if m.Shard.Rendezvous == nil || m.Shard.StartAtUnixNs != m.StartUnixNs {
			t.Fatalf("shard %d did not start from the rendezvous: %+v\n%s", i, m.Shard, job)
		}
		if i == 0 {
			start = m.StartUnixNs
		} else if m.StartUnixNs != start {
			t.Fatalf("shards started at %d and %d", start, m.StartUnixNs)
		}
		for _, w := range m.Workers {
			if w.CPU < 0 {
				t.Fatalf("shard %d worker %d unpinned", i, w.ID)
			}
			if s, ok := cpuOf[w.CPU]; ok && s != i {
				t.Fatalf("CPU %d has workers of shards %d and %d\n%s", w.CPU, s, i, job)
			}
			cpuOf[w.CPU] = i
		}
		seen += m.Counts.Completed
	}
	if seen != sessions*turns {
		t.Fatalf("shards completed %d requests, want %d", seen, sessions*turns)
	}
	s := readSummary(t, root)
	if n := s.must(t, "request_count").Avg; n != sessions*turns {
		t.Errorf("merged request_count %v, want %d", n, sessions*turns)
	}
	if !strings.Contains(string(job), "Shards: 2 of 2 present") {
		t.Errorf("the job's analysis does not report both shards:\n%s", job)
	}
	t.Logf("workers' CPUs by shard: %v\n%s", cpuOf, job)
}
