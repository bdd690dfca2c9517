package replay

import (
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Sessions. Sessions are numbered 0, 1, 2... in the order their first record appears in the
// plan (the session ordinal). A distributed run deals them over its shards (distshard.go),
// and each shard over its workers and URLs: ordinal k within the shard goes to worker k mod
// W (schedule.WorkerOf) and, with several URLs under round_robin, to URL k mod U. A session
// therefore always stays on one worker and one URL, and both the coordinator and every
// worker compute the same assignment from the plan alone. A worker's part of the plan is
// its schedule.Graph (schedule.LoadChains).

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

// recordsPerWorker returns how many plan records each of w workers gets.
func recordsPerWorker(ord []uint32, w int) []int {
	n := make([]int, w)
	for _, o := range ord {
		if o != schedule.NotInShard {
			n[schedule.WorkerOf(o, w)]++
		}
	}
	return n
}
