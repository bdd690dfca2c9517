package analyze

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/analyze/rundir"
	"github.com/llmbench/llmbench/rawlog"
)

// Shards of a distributed run (replay --shard-index/--shard-count, docs/distributed.md). The
// run directories given together must then be shards of one plan: one shard count, each
// index once. Missing shards are named and the rest analysed (the exit status says it); the
// metrics merge per request, every timeline on its shard's wall-clock anchor.

// ShardReport is what analyze found about the shards of a distributed run.
type ShardReport struct {
	// Count is the number of shards the plan was split into; RunID the run's name, if any.
	Count int
	RunID string
	// Shards are the shards present, by index; Missing the indices of the absent ones.
	Shards  []ShardSummary
	Missing []int
	// MaxStartSkewNs is the largest start skew a shard recorded (absolute), at shard
	// MaxStartSkewShard (-1 when none recorded one).
	MaxStartSkewNs    int64
	MaxStartSkewShard int
	// StartSpreadNs is the largest difference between the shards' start instants (0 when
	// they all shared one --start-at).
	StartSpreadNs int64
	// ClockBudgetMs is the smallest latency budget of this analysis (the schedule-lag bound
	// and the goodput SLOs in ms) that a shard's clock error is compared with.
	ClockBudgetMs float64
	// Unsynchronised lists the shards whose clock was not synchronised, or whose estimated
	// error exceeds ClockBudgetMs, with why.
	Unsynchronised []string
}

// ShardSummary is one shard: where it ran and whether it kept its own schedule.
type ShardSummary struct {
	Index int
	Dir   string
	Host  string
	// Planned are the shard's planned requests (its run.json counts).
	Planned int
	// Status is how the shard's run ended (its run.json status: complete, interrupted,
	// failed, running for one that crashed, unknown for a rebuilt run.json); Error why it
	// failed.
	Status, Error string
	StartSkewNs   int64
	Clock         *rawlog.ClockState
	// Verdict judges this shard alone (dispatch lag and its workers' CPU).
	Verdict Verdict
	run     int
}

// checkShards checks the runs' shard identities (rundir.CheckShards) and reports on the
// shards: which are missing, their largest start skew and spread; nil when the runs are not
// shards.
func checkShards(runs []rundir.Run) (*ShardReport, error) {
	if err := rundir.CheckShards(runs); err != nil || len(runs) == 0 || runs[0].Manifest.Shard == nil {
		return nil, err
	}
	first := runs[0].Manifest
	rep := &ShardReport{Count: first.Shard.Count, RunID: first.Shard.RunID, MaxStartSkewShard: -1}
	present := map[int]bool{}
	lo, hi := first.StartUnixNs, first.StartUnixNs
	for i, r := range runs {
		sh := r.Manifest.Shard
		present[sh.Index] = true
		rep.Shards = append(rep.Shards, ShardSummary{Index: sh.Index, Dir: r.Dir, Host: r.Manifest.Host, Planned: r.Manifest.Counts.Planned,
			Status: r.Manifest.Status, Error: r.Manifest.Error, StartSkewNs: sh.StartSkewNs, Clock: r.Manifest.Clock, run: i})
		if sk := abs64(sh.StartSkewNs); sh.StartAtUnixNs != 0 && (rep.MaxStartSkewShard < 0 || sk > rep.MaxStartSkewNs) {
			rep.MaxStartSkewNs, rep.MaxStartSkewShard = sk, sh.Index
		}
		lo, hi = min(lo, r.Manifest.StartUnixNs), max(hi, r.Manifest.StartUnixNs)
	}
	rep.StartSpreadNs = hi - lo
	for i := 0; i < rep.Count; i++ {
		if !present[i] {
			rep.Missing = append(rep.Missing, i)
		}
	}
	sort.Slice(rep.Shards, func(a, b int) bool { return rep.Shards[a].Index < rep.Shards[b].Index })
	return rep, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// shardNotes are the notes about missing shards, clocks and start instants.
func (rep *ShardReport) notes() []string {
	var out []string
	for _, i := range rep.Missing {
		out = append(out, fmt.Sprintf("MISSING SHARD %d of %d: no run directory of it was given; the results cover the other shards only", i, rep.Count))
	}
	for _, u := range rep.Unsynchronised {
		out = append(out, "clock: "+u+": timelines of the shards align only as well as their clocks")
	}
	if rep.StartSpreadNs > 0 {
		out = append(out, fmt.Sprintf("the shards started at different instants, %s ms apart: give every shard the same --start-at", FormatNumber(float64(rep.StartSpreadNs)/1e6)))
	}
	return out
}

// judgeClocks fills Unsynchronised: shards whose clock was not synchronised, whose state is
// unknown, or whose estimated error exceeds the smallest latency budget.
func (rep *ShardReport) judgeClocks(o *Options) {
	budget := float64(o.MaxScheduleLag) / 1e6
	for _, s := range o.Goodput {
		if s.Metric.Unit == unitMs && s.Threshold > 0 && s.Threshold < budget {
			budget = s.Threshold
		}
	}
	rep.ClockBudgetMs = budget
	for _, s := range rep.Shards {
		c := s.Clock
		switch {
		case c == nil:
			rep.Unsynchronised = append(rep.Unsynchronised, fmt.Sprintf("shard %d (%s) recorded no clock state", s.Index, s.Host))
		case !c.Synchronised:
			rep.Unsynchronised = append(rep.Unsynchronised, fmt.Sprintf("shard %d (%s) ran on an unsynchronised clock (adjtimex status %#x)", s.Index, s.Host, c.Status))
		case float64(c.EstErrorNs)/1e6 > budget:
			rep.Unsynchronised = append(rep.Unsynchronised, fmt.Sprintf("shard %d (%s) clock's estimated error %s ms exceeds the smallest latency budget %s ms",
				s.Index, s.Host, FormatNumber(float64(c.EstErrorNs)/1e6), FormatNumber(budget)))
		}
	}
}

// shardLag collects each shard's dispatch lag, for its own verdict.
type shardLag map[int]*accum.Dist

func (sl shardLag) add(run int, c *collector, limit int) {
	if sl == nil || c == nil || c.d[MDispatchLag] == nil {
		return
	}
	d := sl[run]
	if d == nil {
		d = accum.NewDist(limit, catalog[MDispatchLag].hdrScale)
		sl[run] = d
	}
	d.Merge(c.d[MDispatchLag])
}

// judgeShards gives each shard its own verdict, from its dispatch lag and its workers.
func (a *analysis) judgeShards(s *Summary, lags shardLag) {
	rep := s.Shards
	if rep == nil {
		return
	}
	for i := range rep.Shards {
		sh := &rep.Shards[i]
		sub := &Summary{}
		if d := lags[sh.run]; d != nil {
			if st := d.Stats(catalog[MDispatchLag].div); st != nil {
				sub.Results = []Result{{MetricDef: catalog[MDispatchLag], Stats: st}}
			}
		}
		for _, w := range s.Workers {
			if w.Run == sh.run {
				sub.Workers = append(sub.Workers, w)
			}
		}
		sh.Verdict = verdict(sub, a.opts, verdictInputs{ctx: s.Verdict.VerdictContext})
	}
}

// RunOutcome says how a run (or a shard) that did not complete ended, in capitals for the
// console, and why when run.json says: how is "" for a complete run.
func RunOutcome(status, runErr string) (how, why string) {
	switch status {
	case rawlog.StatusComplete:
		return "", ""
	case rawlog.StatusRunning:
		return "CRASHED", "its run.json still says running: replay's coordinator died before the run ended"
	case rawlog.StatusInterrupted:
		return "INTERRUPTED", "stopped (Ctrl-C or SIGTERM) before the end of its plan"
	case rawlog.StatusFailed:
		return "FAILED", runErr
	case rawlog.StatusUnknown:
		return "OUTCOME UNKNOWN", "its run.json was rebuilt from the logs"
	}
	return "ENDED " + strings.ToUpper(status), runErr
}

// StartSkew returns the largest start skew of a distributed run and whether one was recorded.
func (rep *ShardReport) StartSkew() (time.Duration, bool) {
	if rep == nil || rep.MaxStartSkewShard < 0 {
		return 0, false
	}
	return time.Duration(rep.MaxStartSkewNs), true
}
