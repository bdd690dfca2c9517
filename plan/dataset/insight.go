package dataset

import (
	"math"
	"slices"
	"sort"
)

// Insight summarizes a dataset the way `aiperf analyze-trace` does, for `plan inspect`:
//
//   - total_requests, sessions, timed, duration_s (first to last timestamp), block_size;
//   - min/max/avg_isl and min/max/avg_osl, and isl_stats/osl_stats: {mean, std_dev (of the
//     population), min, p25, median, p75, max}, percentiles interpolated linearly as numpy's;
//   - unique_prefixes: distinct hash_id prefixes (nodes of the prefix tree);
//   - num_prefix_groups: first blocks that start two or more requests;
//   - prefix_reuse_ratio: of all prefix occurrences, the share whose prefix occurs more
//     than once;
//   - cache_hit_rate: the mean over requests with hash_ids of the share of their leading
//     blocks already seen, in arrival order, under an infinite prefix cache;
//     hit_rate_stats its distribution; block_hit_rate the same share over all blocks;
//   - context_length_stats and unique_prompt_length_stats: per request, the tokens of its
//     blocks that recur at the same position in another request (all of them when every
//     block does) and the rest.
//
// Requests are the turns of every conversation, in timestamp order when the dataset is
// timed and in dataset order otherwise; ISL is Turn.PromptTokens and OSL Turn.OSL.
func Insight(ds *Dataset) map[string]any {
	type req struct {
		ts      int64
		isl     int
		osl     int
		hashIDs []int64
	}
	var reqs []req
	for _, c := range ds.Conversations {
		for _, t := range c.Turns {
			reqs = append(reqs, req{ts: t.TimestampNs, isl: t.PromptTokens, osl: t.OSL, hashIDs: t.HashIDs})
		}
	}
	if ds.Timed {
		sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].ts < reqs[j].ts })
	}
	bs := ds.BlockSize
	if bs <= 0 {
		bs = DefaultBlockSize
	}

	isls := make([]float64, len(reqs))
	osls := make([]float64, len(reqs))
	for i, r := range reqs {
		isls[i], osls[i] = float64(r.isl), float64(r.osl)
	}

	// The prefix tree: a node is (parent node, hash id); node ids count from 1, 0 is the root.
	type edge struct {
		parent int32
		id     int64
	}
	nodes := make(map[edge]int32)
	var nodeCount []int // occurrences of each node's prefix
	firstBlocks := make(map[int64]int)
	posCount := make(map[edge]int) // (position, hash id) occurrences
	for _, r := range reqs {
		if len(r.hashIDs) == 0 {
			continue
		}
		firstBlocks[r.hashIDs[0]]++
		var parent int32
		for pos, h := range r.hashIDs {
			e := edge{parent, h}
			n, ok := nodes[e]
			if !ok {
				nodeCount = append(nodeCount, 0)
				n = int32(len(nodeCount))
				nodes[e] = n
			}
			nodeCount[n-1]++
			parent = n
			posCount[edge{int32(min(pos, math.MaxInt32)), h}]++
		}
	}
	reused, total := 0, 0
	for _, c := range nodeCount {
		total += c
		if c > 1 {
			reused += c
		}
	}
	groups := 0
	for _, c := range firstBlocks {
		if c > 1 {
			groups++
		}
	}

	// Infinite-cache hits, in arrival order: a request hits its leading blocks up to the
	// first one never seen before.
	seen := make(map[int64]struct{})
	var hitRates []float64
	hitBlocks, allBlocks := 0, 0
	var context, unique []float64
	for _, r := range reqs {
		if len(r.hashIDs) == 0 {
			context = append(context, 0)
			unique = append(unique, float64(r.isl))
			continue
		}
		hit := len(r.hashIDs)
		for i, h := range r.hashIDs {
			if _, ok := seen[h]; !ok {
				hit = i
				break
			}
		}
		hitRates = append(hitRates, float64(hit)/float64(len(r.hashIDs)))
		hitBlocks += hit
		allBlocks += len(r.hashIDs)
		for _, h := range r.hashIDs {
			seen[h] = struct{}{}
		}
		repeated := 0
		for pos, h := range r.hashIDs {
			if posCount[edge{int32(min(pos, math.MaxInt32)), h}] > 1 {
				repeated++
			}
		}
		if repeated == len(r.hashIDs) {
			context = append(context, float64(r.isl))
			unique = append(unique, 0)
		} else {
			ctx := repeated * bs
			context = append(context, float64(ctx))
			unique = append(unique, float64(r.isl-ctx))
		}
	}

	out := map[string]any{
		"total_requests":             len(reqs),
		"sessions":                   len(ds.Conversations),
		"timed":                      ds.Timed,
		"block_size":                 ds.BlockSize,
		"unique_prefixes":            len(nodes),
		"num_prefix_groups":          groups,
		"prefix_reuse_ratio":         insightRatio(reused, total),
		"cache_hit_rate":             insightMean(hitRates),
		"block_hit_rate":             insightRatio(hitBlocks, allBlocks),
		"min_isl":                    int(insightMin(isls)),
		"max_isl":                    int(insightMax(isls)),
		"avg_isl":                    insightMean(isls),
		"min_osl":                    int(insightMin(osls)),
		"max_osl":                    int(insightMax(osls)),
		"avg_osl":                    insightMean(osls),
		"isl_stats":                  insightStats(isls),
		"osl_stats":                  insightStats(osls),
		"context_length_stats":       insightStats(context),
		"unique_prompt_length_stats": insightStats(unique),
		"hit_rate_stats":             insightStats(hitRates),
	}
	if ds.Timed && len(reqs) > 0 {
		out["duration_s"] = float64(reqs[len(reqs)-1].ts-reqs[0].ts) / 1e9
	}
	return out
}

func insightRatio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func insightMean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func insightMin(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Min(v)
}

func insightMax(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}

// stats returns AIPerf's MetricStats of v, or nil when v is empty.
func insightStats(v []float64) map[string]float64 {
	if len(v) == 0 {
		return nil
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := insightMean(s)
	ss := 0.0
	for _, x := range s {
		ss += (x - m) * (x - m)
	}
	return map[string]float64{
		"mean":    m,
		"std_dev": math.Sqrt(ss / float64(len(s))),
		"min":     s[0],
		"p25":     insightPercentile(s, 25),
		"median":  insightPercentile(s, 50),
		"p75":     insightPercentile(s, 75),
		"max":     s[len(s)-1],
	}
}

// percentile interpolates linearly between the closest ranks of sorted s (numpy's default).
func insightPercentile(s []float64, p float64) float64 {
	pos := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}
