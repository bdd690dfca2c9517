package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/rendezvous"
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

// Distributed holds the flags of a distributed replay: the shard identity, the shared start
// instant, the run id, and the source addresses.
type Distributed struct {
	fs         *pflag.FlagSet
	index      *int
	count      *int
	startAt    *string
	runID      *string
	planHash   *string
	localAddrs *string
	rendezvous *string
	rdvTimeout *time.Duration
}

// AddDistributed defines the distributed-replay flags on fs.
func AddDistributed(fs *pflag.FlagSet) *Distributed {
	return &Distributed{fs: fs,
		index: fs.Int("shard-index", 0, "replay only shard I of --shard-count (0-based; default $"+EnvJobCompletionIndex+", else $"+EnvSlurmProcID+"); never without a shard count"),
		count: fs.Int("shard-count", 0, "number of shards the plan is split into, by session (default $"+EnvShardCount+", else $"+EnvSlurmNTasks+" under srun; 0: the whole plan); never without a shard index"),
		startAt: fs.String("start-at", "", "wall-clock instant of the plan's t = 0, the same on every shard: RFC 3339 (2026-12-01T14:00:00.000Z) or +DURATION from now (+30s); "+
			"a shard that starts more than the plan's first gap late refuses"),
		runID:      fs.String("run-id", "", "name of the distributed run, recorded in run.json"),
		planHash:   fs.String("plan-hash", "", "refuse to start unless the plan is this one (hex SHA-256, as `plan inspect` prints it)"),
		localAddrs: fs.String("local-addr", "", "source addresses to spread connections over, round-robin: a list of addresses and ranges (127.0.0.2-127.0.0.9,10.0.0.5)"),
		rendezvous: fs.String("rendezvous", "", "HOST:PORT of shard 0: the shards meet there once ready and start together at an instant shard 0 picks (instead of --start-at)"),
		rdvTimeout: fs.Duration("rendezvous-timeout", 0, "how long a shard waits at the rendezvous for every other shard (default "+rendezvous.DefaultTimeout.String()+")"),
	}
}

// Apply puts the flags (or, for the shard identity, the environment) into o; notice gets a
// line saying where an identity from the environment came from. now is the clock +DURATION
// counts from.
func (d *Distributed) Apply(o *replay.Options, getenv func(string) string, now time.Time, notice io.Writer) error {
	index, count, from, err := d.shard(getenv)
	if err != nil {
		return err
	}
	if from != "" && count > 0 {
		fmt.Fprintf(notice, "replay: shard %d of %d (from %s)\n", index, count, from)
	}
	o.ShardIndex, o.ShardCount = index, count
	if *d.startAt != "" {
		t, err := ParseStartAt(*d.startAt, now)
		if err != nil {
			return err
		}
		if err := replay.CheckStartAhead(t, now); err != nil { // before any plan or directory is made
			return fmt.Errorf("--%w", err)
		}
		o.StartAt = t
	}
	o.RunID, o.PlanHash = *d.runID, strings.ToLower(*d.planHash)
	o.Rendezvous, o.RendezvousTimeout = *d.rendezvous, *d.rdvTimeout
	if Changed(d.fs, "rendezvous-timeout") && *d.rdvTimeout <= 0 {
		return fmt.Errorf("--rendezvous-timeout %v: must be positive", *d.rdvTimeout)
	}
	if o.CPUs == nil {
		part, from, err := slurmLocalPart(getenv)
		if err != nil {
			return err
		}
		if part.Count > 1 {
			fmt.Fprintf(notice, "replay: task %d of %d on this node (from %s)\n", part.Index, part.Count, from)
			o.LocalPart = part
		}
	}
	if *d.localAddrs != "" {
		a, err := replay.ParseLocalAddrs(*d.localAddrs)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		o.LocalAddrs = a
	}
	return nil
}

// shard resolves the shard identity: flags first, then Kubernetes' and Slurm's variables.
// from names the variables used ("" for flags only).
func (d *Distributed) shard(getenv func(string) string) (index, count int, from string, err error) {
	index, count = *d.index, *d.count
	envInt := func(name string) (int, bool, error) {
		v := getenv(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("$%s %q: want a number >= 0", name, v)
		}
		return n, true, nil
	}
	var used []string
	slurm, haveIndex := false, Changed(d.fs, "shard-index")
	if !haveIndex {
		if n, ok, err := envInt(EnvJobCompletionIndex); err != nil {
			return 0, 0, "", err
		} else if ok {
			index, used, haveIndex = n, append(used, EnvJobCompletionIndex), true
		} else if n, ok, err := envInt(EnvSlurmProcID); err != nil {
			return 0, 0, "", err
		} else if ok {
			index, used, slurm, haveIndex = n, append(used, EnvSlurmProcID), true, true
		}
	}
	if !Changed(d.fs, "shard-count") {
		if n, ok, err := envInt(EnvShardCount); err != nil {
			return 0, 0, "", err
		} else if ok {
			count, used = n, append(used, EnvShardCount)
		} else if slurm {
			if n, ok, err := envInt(EnvSlurmNTasks); err != nil {
				return 0, 0, "", err
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
	switch {
	case count < 0:
		return 0, 0, "", fmt.Errorf("%s %d: must be positive", where("count"), count)
	case count == 0 && Changed(d.fs, "shard-index"):
		// Even --shard-index 0: alone it would replay the whole plan, not shard 0.
		return 0, 0, "", fmt.Errorf("--shard-index %d without a shard count: pass --shard-count (or set $%s)", index, EnvShardCount)
	case count > 0 && !haveIndex:
		return 0, 0, "", fmt.Errorf("%s %d without a shard index: pass --shard-index (or set $%s, or run under srun)", where("count"), count, EnvJobCompletionIndex)
	case count == 0 && index != 0:
		return 0, 0, "", fmt.Errorf("%s %d without a shard count: pass --shard-count or set $%s", where("index"), index, EnvShardCount)
	case count > 0 && index >= count:
		return 0, 0, "", fmt.Errorf("%s %d: must be below the shard count %d (%s)", where("index"), index, count, where("count"))
	case index < 0:
		return 0, 0, "", fmt.Errorf("--shard-index %d: must not be negative", index)
	}
	return index, count, strings.Join(used, ", "), nil
}

// slurmLocalPart is this srun task's part of its node's CPUs when several tasks share the
// node and Slurm did not bind each to CPUs of its own (TaskPlugin task/none, or
// --cpu-bind=none): SLURM_LOCALID of the node's count in SLURM_STEP_TASKS_PER_NODE. Count 0
// otherwise. from names the variables used.
func slurmLocalPart(getenv func(string) string) (part replay.CPUPart, from string, err error) {
	local, perNode := getenv(EnvSlurmLocalID), getenv(EnvSlurmStepTasksPerNode)
	if local == "" || perNode == "" {
		return replay.CPUPart{}, "", nil
	}
	if bind := getenv(EnvSlurmCPUBindType); bind != "" && !strings.Contains(bind, "none") {
		return replay.CPUPart{}, "", nil // each task's affinity is its own already
	}
	id, err := strconv.Atoi(strings.TrimSpace(local))
	if err != nil || id < 0 {
		return replay.CPUPart{}, "", fmt.Errorf("$%s %q: want a number >= 0", EnvSlurmLocalID, local)
	}
	node := 0
	if v := getenv(EnvSlurmNodeID); v != "" {
		if node, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || node < 0 {
			return replay.CPUPart{}, "", fmt.Errorf("$%s %q: want a number >= 0", EnvSlurmNodeID, v)
		}
	}
	counts, err := parseTasksPerNode(perNode)
	if err != nil {
		return replay.CPUPart{}, "", fmt.Errorf("$%s %q: %w", EnvSlurmStepTasksPerNode, perNode, err)
	}
	if node >= len(counts) {
		return replay.CPUPart{}, "", fmt.Errorf("$%s %d: $%s %q lists %d nodes", EnvSlurmNodeID, node, EnvSlurmStepTasksPerNode, perNode, len(counts))
	}
	n := counts[node]
	if id >= n {
		return replay.CPUPart{}, "", fmt.Errorf("$%s %d: must be below this node's %d tasks ($%s %q)", EnvSlurmLocalID, id, n, EnvSlurmStepTasksPerNode, perNode)
	}
	return replay.CPUPart{Index: id, Count: n}, EnvSlurmLocalID + ", " + EnvSlurmStepTasksPerNode, nil
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

// ParseStartAt parses --start-at: an RFC 3339 time (sub-second digits allowed) or
// +DURATION after now.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--start-at %q: want +DURATION such as +30s", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want RFC 3339 with a zone (2026-12-01T14:00:00.000Z) or +DURATION (+30s)", s)
	}
	return t, nil
}
