package schedule

import (
	"fmt"

	"github.com/llmbench/llmbench/mmapds"
)

// ShardFault is what is wrong with a distributed shard identity (index of count), ShardOK
// when nothing is. The rule is one; its words are the caller's, who knows where the
// identity came from (a flag, an environment variable, the coordinator).
type ShardFault int

// The faults, in the order CheckShard looks for them.
const (
	ShardOK                ShardFault = iota
	ShardCountNegative                // count < 0
	ShardIndexWithoutCount            // count 0 (the whole plan) and index != 0
	ShardIndexPastCount               // index >= count > 0
	ShardIndexNegative                // index < 0 < count
)

// CheckShard checks a shard identity: count 0 (no sharding, index 0) or 0 <= index < count.
func CheckShard(index, count int) ShardFault {
	switch {
	case count < 0:
		return ShardCountNegative
	case count == 0 && index != 0:
		return ShardIndexWithoutCount
	case count > 0 && index >= count:
		return ShardIndexPastCount
	case count > 0 && index < 0:
		return ShardIndexNegative
	}
	return ShardOK
}

// ShardError is CheckShard's fault in the words of replay's options (nil when none).
func ShardError(index, count int) error {
	switch CheckShard(index, count) {
	case ShardCountNegative:
		return fmt.Errorf("shard-count %d: must be positive", count)
	case ShardIndexWithoutCount:
		return fmt.Errorf("shard-index %d without --shard-count", index)
	case ShardIndexPastCount, ShardIndexNegative:
		return fmt.Errorf("shard-index %d: must be between 0 and shard-count-1 (%d)", index, count-1)
	}
	return nil
}

// Allotment is a part's share of a run, as Allot dealt it.
type Allotment struct {
	// Sessions are the sessions of the part's shard (the plan's when not sharded).
	Sessions int
	// Concurrency is the shard's share of the plan's concurrency (the plan's when not
	// sharded, 0 for none).
	Concurrency int
	// MaxWorkers is the most workers the shard can have so that each owns a slot of every
	// cap, MaxWorkersCap the cap that bounds it; 0 when no cap does.
	MaxWorkers    int
	MaxWorkersCap string
	// Prefill says whether a prefill cap applies in some phase.
	Prefill bool
}

// Allot deals a run to part p, the one computation of a shard's and a worker's share: the
// plan's records carry session ordinals ord (sessions of them), renumbered in place to the
// shard's own (NotInShard for another shard's records; the workers' deal then works on
// those unchanged); the plan's caps m are checked against the shard count and, when cfg is
// not nil, cfg gets worker p's concurrency and prefill slots. A shard with no session or no
// slot of some cap is refused.
func Allot(m *mmapds.Meta, ord []uint32, sessions int, p Part, cfg *Config) (Allotment, error) {
	if p.Shards > 1 {
		if err := ShardError(p.Shard, p.Shards); err != nil {
			return Allotment{}, err
		}
		if sessions < p.Shards {
			return Allotment{}, fmt.Errorf("shard-count %d: the plan has only %d sessions, so some shard would have none", p.Shards, sessions)
		}
		for i, k := range ord {
			if local, ok := p.inShard(k); ok {
				ord[i] = local
			} else {
				ord[i] = NotInShard
			}
		}
	}
	shard := Part{Shard: p.Shard, Shards: p.Shards}
	caps := capsOf(m)
	if err := caps.check(p.Shards); err != nil {
		return Allotment{}, err
	}
	a := Allotment{Sessions: Share(sessions, shard), Concurrency: Share(m.Concurrency, shard), Prefill: caps.prefill()}
	a.MaxWorkers, a.MaxWorkersCap = caps.maxWorkers(p)
	if cfg != nil {
		if err := caps.config(p, cfg); err != nil {
			return Allotment{}, err
		}
	}
	return a, nil
}
