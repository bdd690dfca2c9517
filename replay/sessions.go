package replay

import (
	"sort"

	"github.com/llmbench/llmbench/mmapds"
)

// Sharding. Sessions are numbered 0, 1, 2... in the order their first record appears in the
// plan (the session ordinal); session ordinal k goes to worker k mod W and, with several URLs
// under round_robin, to URL k mod U. A session therefore always stays on one worker and one
// URL, and both the coordinator and every worker compute the same assignment from the plan
// alone.

// sessionOrdinals returns, per plan record, its session's ordinal, and the number of sessions.
func sessionOrdinals(p *mmapds.Plan) ([]uint32, int, error) {
	ord := make([]uint32, p.Len())
	seen := make(map[uint32]uint32)
	for i := range ord {
		r, _, err := p.Record(i)
		if err != nil {
			return nil, 0, err
		}
		o, ok := seen[r.Session]
		if !ok {
			o = uint32(len(seen))
			seen[r.Session] = o
		}
		ord[i] = o
	}
	return ord, len(seen), nil
}

// shardSizes returns how many plan records each of w workers gets.
func shardSizes(ord []uint32, w int) []int {
	n := make([]int, w)
	for _, o := range ord {
		if o != notInShard {
			n[int(o)%w]++
		}
	}
	return n
}

// slotShare returns worker w's share of n concurrency slots among W workers: n/W each, the
// remainder to the first workers. Slot j (0-based) belongs to worker j mod W, which gives the
// same shares and lets a ramp add slots in global order.
func slotShare(n, workers, w int) int {
	s := n / workers
	if w < n%workers {
		s++
	}
	return s
}

// unit is a run of records one runner sends in order: a session's first turn and the later
// turns chained to it (Turn > 0 and DelayNs >= 0: sent after the previous one completes).
type unit struct {
	first  int32 // plan index of the first record
	offset int64 // first record's SendOffsetNs (mmapds.NoSendOffset for closed loop)
	count  int32 // records in the unit
	url    int32 // target index
	phase  mmapds.Phase
}

// shard is one worker's part of the plan.
type shard struct {
	records []int32 // plan indices, in plan order
	recUnit []int32 // unit id of each entry of records
	open    []int32 // unit ids of open-loop units, by first offset then index
	closed  []int32 // unit ids of closed-loop units, in plan order
	units   []unit
	next    map[int32]int32 // plan index -> next record of its unit, for records that have one
	// warmupUnits counts closed-loop warmup units: closed-loop profile units wait for them.
	warmupUnits int
	// lastOffset is the largest SendOffsetNs in the shard, -1 when none is planned.
	lastOffset int64
}

// buildShard collects worker w's records (of workers W) and chains them into units. The plan
// has passed mmapds.Plan.Validate.
func buildShard(p *mmapds.Plan, ord []uint32, workers, w, urls int) (*shard, error) {
	s := &shard{next: map[int32]int32{}, lastOffset: -1}
	lastOfSession := map[uint32]int32{} // session ordinal -> last plan index seen in this shard
	unitOf := map[int32]int32{}         // plan index -> unit id
	for i := range ord {
		if ord[i] == notInShard || int(ord[i])%workers != w {
			continue
		}
		r, _, err := p.Record(i)
		if err != nil {
			return nil, err
		}
		idx := int32(i)
		s.records = append(s.records, idx)
		if r.SendOffsetNs > s.lastOffset {
			s.lastOffset = r.SendOffsetNs
		}
		prev, hasPrev := lastOfSession[ord[i]]
		lastOfSession[ord[i]] = idx
		if hasPrev && r.Turn > 0 && r.DelayNs >= 0 {
			u := unitOf[prev]
			s.next[prev] = idx
			unitOf[idx] = u
			s.units[u].count++
			s.recUnit = append(s.recUnit, u)
			continue
		}
		u := int32(len(s.units))
		unitOf[idx] = u
		s.recUnit = append(s.recUnit, u)
		s.units = append(s.units, unit{first: idx, offset: r.SendOffsetNs, count: 1,
			url: int32(int(ord[i]) % urls), phase: r.Phase})
		if r.SendOffsetNs >= 0 {
			s.open = append(s.open, u)
		} else {
			s.closed = append(s.closed, u)
			if r.Phase == mmapds.PhaseWarmup {
				s.warmupUnits++
			}
		}
	}
	sort.SliceStable(s.open, func(a, b int) bool {
		return s.units[s.open[a]].offset < s.units[s.open[b]].offset
	})
	return s, nil
}

// nextOf returns the record after idx in its unit, or -1.
func (s *shard) nextOf(idx int32) int32 {
	if n, ok := s.next[idx]; ok {
		return n
	}
	return -1
}
