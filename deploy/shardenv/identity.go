package shardenv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/replay/schedule"
)

// Environment variables a shard's identity is taken from when its flags are not given
// (docs/distributed.md).
const (
	// EnvJobCompletionIndex is set by Kubernetes in each pod of an Indexed Job.
	EnvJobCompletionIndex = "JOB_COMPLETION_INDEX"
	// EnvShardCount carries the shard count where the engine does not (Kubernetes).
	EnvShardCount = "LLMBENCH_SHARD_COUNT"
	// EnvSlurmProcID and EnvSlurmNTasks are set by srun in each task.
	EnvSlurmProcID = "SLURM_PROCID"
	EnvSlurmNTasks = "SLURM_NTASKS"
	// EnvSlurmLocalID (the task's number on its node), EnvSlurmNodeID (the node's number in
	// the step) and EnvSlurmStepTasksPerNode (tasks per node, "2(x3),1") tell how many tasks
	// share this node; EnvSlurmCPUBindType says whether Slurm bound each to CPUs of its own.
	EnvSlurmLocalID          = "SLURM_LOCALID"
	EnvSlurmNodeID           = "SLURM_NODEID"
	EnvSlurmStepTasksPerNode = "SLURM_STEP_TASKS_PER_NODE"
	EnvSlurmCPUBindType      = "SLURM_CPU_BIND_TYPE"
)

// Flags are the shard identity as the command line gave it (--shard-index, --shard-count):
// each value, and whether it was given at all.
type Flags struct {
	Index, Count       int
	IndexSet, CountSet bool
}

// Identity is a resolved shard identity: shard Index of Count (Count 0: the whole plan).
// From names the variables it was taken from ("" when from flags only).
type Identity struct {
	Index, Count int
	From         string
}

// Resolve resolves the shard identity: flags first, then Kubernetes' and Slurm's variables
// (getenv). One of index and count without the other is refused, even --shard-index 0
// (alone it would replay the whole plan on every shard).
func Resolve(f Flags, getenv func(string) string) (Identity, error) {
	index, count := f.Index, f.Count
	var used []string
	slurm, haveIndex := false, f.IndexSet
	if !haveIndex {
		if n, ok, err := envInt(getenv, EnvJobCompletionIndex); err != nil {
			return Identity{}, err
		} else if ok {
			index, used, haveIndex = n, append(used, EnvJobCompletionIndex), true
		} else if n, ok, err := envInt(getenv, EnvSlurmProcID); err != nil {
			return Identity{}, err
		} else if ok {
			index, used, slurm, haveIndex = n, append(used, EnvSlurmProcID), true, true
		}
	}
	if !f.CountSet {
		if n, ok, err := envInt(getenv, EnvShardCount); err != nil {
			return Identity{}, err
		} else if ok {
			count, used = n, append(used, EnvShardCount)
		} else if slurm {
			if n, ok, err := envInt(getenv, EnvSlurmNTasks); err != nil {
				return Identity{}, err
			} else if ok {
				count, used = n, append(used, EnvSlurmNTasks)
			}
		}
	}
	where := func(flag string) string {
		for _, u := range used {
			if (flag == "index" && (u == EnvJobCompletionIndex || u == EnvSlurmProcID)) || (flag == "count" && (u == EnvShardCount || u == EnvSlurmNTasks)) {
				return "$" + u
			}
		}
		return "--shard-" + flag
	}
	// The presence checks come between the rule's faults, so that each error names what
	// the user gave or left out.
	fault := schedule.CheckShard(index, count)
	switch {
	case fault == schedule.ShardCountNegative:
		return Identity{}, fmt.Errorf("%s %d: must be positive", where("count"), count)
	case count == 0 && f.IndexSet:
		return Identity{}, fmt.Errorf("--shard-index %d without a shard count: pass --shard-count (or set $%s)", index, EnvShardCount)
	case count > 0 && !haveIndex:
		return Identity{}, fmt.Errorf("%s %d without a shard index: pass --shard-index (or set $%s, or run under srun)", where("count"), count, EnvJobCompletionIndex)
	case fault == schedule.ShardIndexWithoutCount:
		return Identity{}, fmt.Errorf("%s %d without a shard count: pass --shard-count or set $%s", where("index"), index, EnvShardCount)
	case fault == schedule.ShardIndexPastCount:
		return Identity{}, fmt.Errorf("%s %d: must be below the shard count %d (%s)", where("index"), index, count, where("count"))
	case fault == schedule.ShardIndexNegative:
		return Identity{}, fmt.Errorf("--shard-index %d: must not be negative", index)
	}
	return Identity{Index: index, Count: count, From: strings.Join(used, ", ")}, nil
}

// envInt reads variable name as a number >= 0; ok false when it is not set.
func envInt(getenv func(string) string, name string) (n int, ok bool, err error) {
	v := getenv(name)
	if v == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("$%s %q: want a number >= 0", name, v)
	}
	return n, true, nil
}
