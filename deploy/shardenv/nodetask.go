package shardenv

import (
	"fmt"
	"strconv"
	"strings"
)

// NodeTask is this srun task's part of its node's CPUs: task Index of the Count tasks on
// the node (Count 0: the node's CPUs are not shared out).
type NodeTask struct{ Index, Count int }

// SlurmNodeTask is this srun task's part of its node's CPUs when several tasks share the
// node and Slurm did not bind each to CPUs of its own (TaskPlugin task/none, or
// --cpu-bind=none): SLURM_LOCALID of the node's count in SLURM_STEP_TASKS_PER_NODE. Count 0
// otherwise. from names the variables used.
func SlurmNodeTask(getenv func(string) string) (task NodeTask, from string, err error) {
	local, perNode := getenv(EnvSlurmLocalID), getenv(EnvSlurmStepTasksPerNode)
	if local == "" || perNode == "" {
		return NodeTask{}, "", nil
	}
	if bind := getenv(EnvSlurmCPUBindType); bind != "" && !strings.Contains(bind, "none") {
		return NodeTask{}, "", nil // each task's affinity is its own already
	}
	id, err := strconv.Atoi(strings.TrimSpace(local))
	if err != nil || id < 0 {
		return NodeTask{}, "", fmt.Errorf("$%s %q: want a number >= 0", EnvSlurmLocalID, local)
	}
	node := 0
	if v := getenv(EnvSlurmNodeID); v != "" {
		if node, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || node < 0 {
			return NodeTask{}, "", fmt.Errorf("$%s %q: want a number >= 0", EnvSlurmNodeID, v)
		}
	}
	counts, err := parseTasksPerNode(perNode)
	if err != nil {
		return NodeTask{}, "", fmt.Errorf("$%s %q: %w", EnvSlurmStepTasksPerNode, perNode, err)
	}
	if node >= len(counts) {
		return NodeTask{}, "", fmt.Errorf("$%s %d: $%s %q lists %d nodes", EnvSlurmNodeID, node, EnvSlurmStepTasksPerNode, perNode, len(counts))
	}
	n := counts[node]
	if id >= n {
		return NodeTask{}, "", fmt.Errorf("$%s %d: must be below this node's %d tasks ($%s %q)", EnvSlurmLocalID, id, n, EnvSlurmStepTasksPerNode, perNode)
	}
	return NodeTask{Index: id, Count: n}, EnvSlurmLocalID + ", " + EnvSlurmStepTasksPerNode, nil
}

// parseTasksPerNode expands Slurm's tasks-per-node list: "2(x3),1" is 2, 2, 2, 1.
func parseTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		num, rep, repeated := strings.Cut(item, "(x")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("item %q: want COUNT or COUNT(xREPEAT)", item)
		}
		k := 1
		if repeated {
			r, ok := strings.CutSuffix(rep, ")")
			if k, err = strconv.Atoi(r); !ok || err != nil || k < 1 || k > 1<<20 {
				return nil, fmt.Errorf("item %q: want COUNT or COUNT(xREPEAT)", item)
			}
		}
		if len(out)+k > 1<<20 {
			return nil, fmt.Errorf("more than %d nodes", 1<<20)
		}
		for range k {
			out = append(out, n)
		}
	}
	return out, nil
}
