package output

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// ShardLines are the console lines about the shards: one per shard, then the combined facts.
func ShardLines(s *analyze.Summary) []string {
	rep := s.Shards
	if rep == nil {
		return nil
	}
	var out []string
	var ended []string // the shards that did not complete, with how they ended
	for _, sh := range rep.Shards {
		v := "schedule kept"
		how, why := analyze.RunOutcome(sh.Status, sh.Error)
		switch {
		case how != "":
			// A shard that did not run to its end kept no schedule to its end: say how it
			// ended, and its lag only as a fact about what it sent.
			v = how
			if why != "" {
				v += ": " + why
			}
			if sh.Verdict.LagKnown {
				v += fmt.Sprintf("; dispatch lag p99 %s ms over what it sent", analyze.FormatNumber(sh.Verdict.DispatchLagP99Ms))
			}
			ended = append(ended, fmt.Sprintf("shard %d %s", sh.Index, how))
		case !sh.Verdict.Known:
			v = "verdict unknown"
		case !sh.Verdict.Kept:
			v = "schedule NOT kept: " + strings.Join(sh.Verdict.Reasons, "; ")
		case sh.Verdict.LagKnown:
			v += fmt.Sprintf(" (dispatch lag p99 %s ms)", analyze.FormatNumber(sh.Verdict.DispatchLagP99Ms))
		}
		clock := "clock unknown"
		if c := sh.Clock; c != nil {
			clock = fmt.Sprintf("clock synchronised, est. error %s ms", analyze.FormatNumber(float64(c.EstErrorNs)/1e6))
			if !c.Synchronised {
				clock = "clock NOT synchronised"
			}
		}
		out = append(out, fmt.Sprintf("Shard %d of %d (%s, %s): %d planned, start skew %s ms, %s; %s",
			sh.Index, rep.Count, sh.Host, sh.Dir, sh.Planned, analyze.FormatNumber(float64(sh.StartSkewNs)/1e6), clock, v))
	}
	line := fmt.Sprintf("Shards: %d of %d present", len(rep.Shards), rep.Count)
	if len(rep.Missing) > 0 {
		line += fmt.Sprintf(", MISSING %s", joinInts(rep.Missing))
	}
	if len(ended) > 0 {
		line += fmt.Sprintf(", %d of them did not complete (%s)", len(ended), strings.Join(ended, ", "))
	}
	if rep.MaxStartSkewShard >= 0 {
		line += fmt.Sprintf("; largest start skew %s ms (shard %d)", analyze.FormatNumber(float64(rep.MaxStartSkewNs)/1e6), rep.MaxStartSkewShard)
	}
	if len(rep.Unsynchronised) > 0 {
		line += fmt.Sprintf("; %d shard clock(s) not trusted to %s ms", len(rep.Unsynchronised), analyze.FormatNumber(rep.ClockBudgetMs))
	}
	return append(out, line+"; combined verdict below")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
