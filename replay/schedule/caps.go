package schedule

import (
	"fmt"

	"github.com/llmbench/llmbench/mmapds"
)

// planCaps are a plan's caps on what runs at once, per phase, with the warmup's resolved (0
// in the plan means the profile's): concurrency (units holding a slot) and prefill
// concurrency (requests sent with no response byte back yet), each with its ramp.
type planCaps struct {
	caps [4]planCap
}

// planCap is one cap: its size (0: none) and ramp.
type planCap struct {
	name   string
	n      int
	rampNs int64
}

// The caps, in planCaps.caps.
const (
	capConcurrency = iota
	capWarmupConcurrency
	capPrefill
	capWarmupPrefill
)

func capsOf(m *mmapds.Meta) planCaps {
	or := func(a, b int) int {
		if a > 0 {
			return a
		}
		return b
	}
	orNs := func(a, b int64) int64 {
		if a > 0 {
			return a
		}
		return b
	}
	return planCaps{caps: [4]planCap{
		{"concurrency", m.Concurrency, m.ConcurrencyRampNs},
		{"warmup concurrency", or(m.WarmupConcurrency, m.Concurrency), orNs(m.WarmupConcurrencyRampNs, m.ConcurrencyRampNs)},
		{"prefill concurrency", m.PrefillConcurrency, m.PrefillConcurrencyRampNs},
		{"warmup prefill concurrency", or(m.WarmupPrefillConcurrency, m.PrefillConcurrency), orNs(m.WarmupPrefillConcurrencyRampNs, m.PrefillConcurrencyRampNs)},
	}}
}

// check refuses caps a shard of count has no share of (index 0..count-1): every shard and
// worker needs at least one slot of each cap it applies. It is the one shard-versus-cap
// rule; the concurrency cap's refusal is the one a shard count past the concurrency gets.
func (c planCaps) check(count int) error {
	for _, k := range c.caps {
		if k.n < 0 || k.rampNs < 0 {
			return fmt.Errorf("the plan's %s %d (ramp %d ns) is negative", k.name, k.n, k.rampNs)
		}
		if count > 1 && k.n > 0 && count > k.n {
			return fmt.Errorf("shard-count %d: the plan's %s %d cannot be split over more shards than that", count, k.name, k.n)
		}
	}
	return nil
}

// maxWorkers is the most workers shard p can have so that each owns a slot of every cap (0:
// no cap bounds it).
func (c planCaps) maxWorkers(p Part) (n int, what string) {
	shard := Part{Shard: p.Shard, Shards: p.Shards}
	for _, k := range c.caps {
		if k.n <= 0 {
			continue
		}
		if s := Share(k.n, shard); n == 0 || s < n {
			n, what = s, k.name
		}
	}
	return n, what
}

// prefill says whether a prefill cap applies in some phase.
func (c planCaps) prefill() bool {
	return c.caps[capPrefill].n > 0 || c.caps[capWarmupPrefill].n > 0
}

// config fills c's slot lists for part.
func (c planCaps) config(part Part, cfg *Config) error {
	lists := [4]*[]int64{&cfg.Slots, &cfg.WarmupSlots, &cfg.PrefillSlots, &cfg.WarmupPrefillSlots}
	for i, k := range c.caps {
		if k.n <= 0 {
			*lists[i] = nil
			continue
		}
		*lists[i] = Slots(k.n, k.rampNs, part)
		if len(*lists[i]) == 0 {
			return fmt.Errorf("worker %d of %d has no share of %s %d", part.Worker, part.Workers, k.name, k.n)
		}
	}
	if c.caps[capWarmupConcurrency].n <= 0 {
		cfg.WarmupSlots = []int64{} // no cap in the warmup either (nil would mean the profile's)
	}
	return nil
}
