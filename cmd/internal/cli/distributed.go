package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/deploy/shardenv"
	"github.com/llmbench/llmbench/replay"
	"github.com/llmbench/llmbench/replay/rendezvous"
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
		index: fs.Int("shard-index", 0, "replay only shard I of --shard-count (0-based; default $"+shardenv.EnvJobCompletionIndex+", else $"+shardenv.EnvSlurmProcID+"); never without a shard count"),
		count: fs.Int("shard-count", 0, "number of shards the plan is split into, by session (default $"+shardenv.EnvShardCount+", else $"+shardenv.EnvSlurmNTasks+" under srun; 0: the whole plan); never without a shard index"),
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
	id, err := d.shard(getenv)
	if err != nil {
		return err
	}
	if id.From != "" && id.Count > 0 {
		fmt.Fprintf(notice, "replay: shard %d of %d (from %s)\n", id.Index, id.Count, id.From)
	}
	o.ShardIndex, o.ShardCount = id.Index, id.Count
	if *d.startAt != "" {
		t, err := replay.ParseStartAt(*d.startAt, now)
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
		task, from, err := shardenv.SlurmNodeTask(getenv)
		if err != nil {
			return err
		}
		if task.Count > 1 {
			fmt.Fprintf(notice, "replay: task %d of %d on this node (from %s)\n", task.Index, task.Count, from)
			o.LocalPart = replay.CPUPart{Index: task.Index, Count: task.Count}
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

// shard resolves the shard identity: flags first, then Kubernetes' and Slurm's variables
// (deploy/shardenv).
func (d *Distributed) shard(getenv func(string) string) (shardenv.Identity, error) {
	return shardenv.Resolve(shardenv.Flags{Index: *d.index, Count: *d.count,
		IndexSet: Changed(d.fs, "shard-index"), CountSet: Changed(d.fs, "shard-count")}, getenv)
}
