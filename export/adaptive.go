package export

import (
	"github.com/llmbench/llmbench/adaptive/audit"
	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/report"
)

// auditAdaptive audits an adaptive-scale run (package adaptive/audit) when its run
// directories hold adaptive_scale_events.jsonl, with the analysis's tokenizer, token-count
// choice and metrics, and adds the audit's block to the JSON export; nil when they hold none.
// Its error is about the input (an events file that cannot be read).
func auditAdaptive(dirs []string, opts analyze.Options, s *analyze.Summary) (*audit.Report, error) {
	path := audit.Find(dirs)
	if path == "" {
		return nil, nil
	}
	rep, err := audit.Run(path, audit.Options{RunDirs: dirs, PlanPath: opts.PlanPath, Tokenizer: s.Counter,
		UseServerTokenCount: opts.UseServerTokenCount, Metrics: s.Registry})
	if err != nil {
		return nil, err
	}
	s.Blocks = append(s.Blocks, analyze.Block{Key: audit.BlockKey, Value: rep.JSON()})
	return rep, nil
}

// controlOf is the page's control chart of an audited run; nil for other runs.
func controlOf(rep *audit.Report) *report.Control {
	if rep == nil {
		return nil
	}
	c := &report.Control{Variable: rep.ControlVariable}
	for _, st := range rep.Control {
		c.Steps = append(c.Steps, report.ControlStep{AtUnixNs: st.AtUnixNs, Value: st.Value})
	}
	for _, w := range rep.Windows {
		if w.HasValue {
			c.Windows = append(c.Windows, report.ControlWindow{EndUnixNs: w.EndNs, Value: w.ControlValue,
				Extended: w.Extended, Passed: w.EventPassed, Agrees: w.Agree})
		}
	}
	return c
}
