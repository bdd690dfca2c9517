package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
)

// Sessions is the run page's section of a graph plan's run (agentic workloads): analyze's
// session lines and a swim lane of the sessions over time, each agent a row of its own under
// the agent that spawned it.
type Sessions struct {
	Lines []string  `json:"lines"`
	Rows  []LaneRow `json:"rows"`
	Note  string    `json:"note,omitempty"`
	Span  [2]Number `json:"span"` // the time axis, seconds since the benchmark start
}

// LaneRow is one agent of one session: its requests as [written, ended, completed 1/0]
// spans in seconds since the benchmark start (an end of NaN: it did not end).
type LaneRow struct {
	Session uint32      `json:"session"`
	Label   string      `json:"label"`
	Depth   int         `json:"depth"`
	Spans   [][3]Number `json:"spans"`
}

// maxLaneRows bounds the rows drawn (every agent of the sessions analyze kept).
const maxLaneRows = 600

func sessionsSection(s *analyze.Summary) *Sessions {
	ss := s.Sessions
	if ss == nil {
		return nil
	}
	out := &Sessions{Lines: output.SessionLines(s), Rows: []LaneRow{}}
	lo, hi := 0.0, sec(s, s.EndUnixNs)
	for _, l := range ss.Lanes {
		for _, a := range l.Agents {
			if len(out.Rows) == maxLaneRows {
				out.Note = fmt.Sprintf("the first sessions only: the swim lane draws at most %d agents", maxLaneRows)
				break
			}
			label := strings.Repeat("  ", a.Depth) + a.Name
			if a.Depth == 0 {
				label = fmt.Sprintf("session %d %s", l.Session, a.Name)
			}
			row := LaneRow{Session: l.Session, Label: label, Depth: a.Depth, Spans: [][3]Number{}}
			for _, r := range a.Requests {
				ok := 0.0
				if r.OK {
					ok = 1
				}
				start, end := sec(s, r.Send), sec(s, r.End)
				lo = min(lo, start)
				if !math.IsNaN(end) {
					hi = max(hi, end)
				}
				row.Spans = append(row.Spans, [3]Number{Number(start), Number(end), Number(ok)})
			}
			out.Rows = append(out.Rows, row)
		}
	}
	if int64(len(ss.Lanes)) < ss.Sessions && out.Note == "" {
		out.Note = fmt.Sprintf("the first %d of %d sessions", len(ss.Lanes), ss.Sessions)
	}
	out.Span = [2]Number{Number(lo), Number(hi)}
	return out
}
