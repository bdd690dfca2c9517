package schedule

import (
	"math"
	"math/bits"
)

// NotInShard marks, in a list of session ordinals, a record of another distributed shard.
const NotInShard = math.MaxUint32

// Part names one worker's part of a run: worker Worker of Workers on distributed shard Shard
// of Shards. Shards 0 means one machine (as 1); Workers 0 means one worker.
type Part struct {
	Shard, Shards   int
	Worker, Workers int
}

// deal is the one rule that deals items numbered over the whole run (sessions, concurrency
// slots) to parts: item k goes to shard k mod Shards, where it is number k/Shards, and that
// number goes to worker (k/Shards) mod Workers. So p owns items first, first+step, ...
func (p Part) deal() (first, step int) {
	s, w := max(p.Shards, 1), max(p.Workers, 1)
	return p.Shard + p.Worker*s, s * w
}

// inShard is the deal's first step for item k of the whole run: whether p's shard owns it,
// and its number there.
func (p Part) inShard(k uint32) (local uint32, ok bool) {
	s := uint32(max(p.Shards, 1))
	return k / s, int(k%s) == p.Shard
}

// WorkerOf is the worker, of workers, that owns the session with ordinal k within its shard
// (the shard's local numbering): the deal's last step.
func WorkerOf(k uint32, workers int) int { return int(k % uint32(max(workers, 1))) }

// Share is how many of n concurrency slots p owns: n/(Shards·Workers) each, the remainder to
// the first (by the deal).
func Share(n int, p Part) int {
	first, step := p.deal()
	if first >= n {
		return 0
	}
	return (n - first + step - 1) / step
}

// Slots returns the instants (run clock, ns) at which p's concurrency slots open, in order,
// out of n under a concurrency ramp of rampNs: global slot j opens at rampNs·j/(n-1) (all
// at 0 without a ramp or with n = 1), whichever part owns it, so the parts together ramp
// exactly like one worker would. Its length is Share(n, p).
func Slots(n int, rampNs int64, p Part) []int64 {
	first, step := p.deal()
	at := make([]int64, 0, Share(n, p))
	for j := first; j < n; j += step {
		at = append(at, rampAt(j, n, rampNs))
	}
	return at
}

// rampAt is global slot j's opening instant: rampNs·j/(n-1), exact (128-bit product).
func rampAt(j, n int, rampNs int64) int64 {
	if rampNs <= 0 || n <= 1 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(rampNs), uint64(j))
	q, _ := bits.Div64(hi, lo, uint64(n-1)) // j <= n-1: the quotient is at most rampNs
	return int64(q)
}
