package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/rawlog"
)

// TestSlurm runs deploy/slurm/llmbench.sbatch on a real Slurm cluster (make e2e-slurm starts
// a one-machine one with deploy/slurm/local-cluster.sh): srun starts two tasks, each replays
// its shard (from SLURM_PROCID/SLURM_NTASKS) against mockllm from one start instant, and the
// script's analysis merges them. Skipped unless LLMBENCH_E2E_SLURM=1 and SLURM_CONF is set.
func TestSlurm(t *testing.T) {
	if os.Getenv("LLMBENCH_E2E_SLURM") != "1" || os.Getenv("SLURM_CONF") == "" {
		t.Skip("needs a Slurm cluster: make e2e-slurm")
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
	cmd := exec.CommandContext(ctx, "sbatch", "--wait", "--ntasks=2", "--ntasks-per-node=2", "--output="+filepath.Join(dir, "job.out"), script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAN="+planPath, "URL="+srv.URL, "LLMBENCH_BIN="+filepath.Dir(bin.replay),
		"RESULTS="+dir, "RUN_ID=slurm1", "START_IN=8", "REPLAY_ARGS=--no-pin --workers 1 --no-gpu-telemetry --ui-type none")
	out, err := cmd.CombinedOutput()
	job, _ := os.ReadFile(filepath.Join(dir, "job.out"))
	if err != nil {
		t.Fatalf("sbatch: %v\n%s\njob output:\n%s", err, out, job)
	}
	root := filepath.Join(dir, "slurm1")
	seen := 0
	for i := range 2 {
		m, err := rawlog.ReadManifest(filepath.Join(root, "shard-"+string(rune('0'+i))))
		if err != nil {
			t.Fatalf("%v\njob output:\n%s", err, job)
		}
		if m.Shard == nil || m.Shard.Index != i || m.Shard.Count != 2 || m.Status != rawlog.StatusComplete {
			t.Fatalf("shard %d: %+v status %s\n%s", i, m.Shard, m.Status, job)
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
}
