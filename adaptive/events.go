// Package adaptive owns in-run adaptive scale's formats: the events a run's controller writes
// to adaptive_scale_events.jsonl as it decides, and the summary it leaves in
// adaptive_scale_summary.json (AIPerf's artifacts, field for field, plus our window bounds on
// the per-request export's clock). The controller that writes them and analyze's audit that
// recomputes them both read and write through these types, so the two never disagree on a
// field; and the SLA spec both judge windows by (sla.go, its syntax parsed by package sweep,
// which AIPerf's --search-sla shares). It imports only package sweep of this repository.
package adaptive

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// File names in a run (or profile artifact) directory.
const (
	EventsFile  = "adaptive_scale_events.jsonl"
	SummaryFile = "adaptive_scale_summary.json"
)

// SchemaVersion is the schema_version every event and the summary carry; readers refuse others.
const SchemaVersion = 1

// Event types, as AIPerf names them.
const (
	PhaseStarted   = "adaptive_phase_started"
	Window         = "adaptive_window"
	Decision       = "adaptive_decision"
	BoundaryFound  = "boundary_discovered"
	SustainStarted = "sustain_started"
	Complete       = "adaptive_complete"
	Failed         = "adaptive_failed"
	Incomplete     = "adaptive_incomplete"
)

// Event is one line of adaptive_scale_events.jsonl. Fields an event type does not use are
// omitted. Window bounds are nanoseconds on the clock of the per-request export's
// request_start_ns, so the requests a window judged can be picked from that file: those whose
// request_start_ns is in [WindowStartNs, WindowEndNs) and that ended before WindowEndNs.
type Event struct {
	SchemaVersion int    `json:"schema_version"`
	Event         string `json:"event"`
	// TimestampNs is when the controller wrote the event, on the run's clock (ns after the
	// run's start, as every *_ns time of the raw log); TimestampUnixNs the same on the wall clock.
	TimestampNs     int64  `json:"timestamp_ns"`
	TimestampUnixNs int64  `json:"timestamp_unix_ns"`
	Phase           string `json:"phase,omitempty"` // "ramp", "sustain"
	ControlVariable string `json:"control_variable,omitempty"`
	// ControlValue is the value in force (window, phase start); Before/After a decision's change.
	ControlValue       *float64 `json:"control_value,omitempty"`
	ControlValueBefore *float64 `json:"control_value_before,omitempty"`
	ControlValueAfter  *float64 `json:"control_value_after,omitempty"`
	// Window: its index, bounds, the requests it judged and those it set apart.
	WindowIndex       int   `json:"window_index,omitempty"`
	WindowStartNs     int64 `json:"window_start_ns,omitempty"`
	WindowEndNs       int64 `json:"window_end_ns,omitempty"`
	CompletedRequests int   `json:"completed_requests,omitempty"`
	// StraddlingRequests started under another control value or ended after the window:
	// counted apart, never judged.
	StraddlingRequests int `json:"straddling_requests,omitempty"`
	// SLAValues holds each SLA's measured value keyed by its spelling (metric:stat), and
	// Passed whether every SLA held; nil Passed means the window had too few requests and
	// was extended rather than judged.
	SLAValues  map[string]float64 `json:"sla_values,omitempty"`
	Passed     *bool              `json:"passed,omitempty"`
	BindingSLA string             `json:"binding_sla,omitempty"`
	// Boundary: the largest passing and the smallest failing control value seen.
	BoundaryValue     *float64 `json:"boundary_value,omitempty"`
	LastPassingValue  *float64 `json:"last_passing_value,omitempty"`
	FirstFailingValue *float64 `json:"first_failing_value,omitempty"`
	Reason            string   `json:"reason,omitempty"`
}

// Summary is adaptive_scale_summary.json.
type Summary struct {
	SchemaVersion        int      `json:"schema_version"`
	Status               string   `json:"status"` // "complete", "failed", "incomplete"
	CompletedReason      string   `json:"completed_reason"`
	ControlVariable      string   `json:"control_variable"`
	BoundaryValue        *float64 `json:"boundary_value"`
	LastPassingValue     *float64 `json:"last_passing_value"`
	FirstFailingValue    *float64 `json:"first_failing_value"`
	FinalValue           *float64 `json:"final_value"`
	SustainWindowsPassed int      `json:"sustain_windows_passed"`
	SustainWindowsTotal  int      `json:"sustain_windows_total"`
	// Candidates lists every control value tried, in order, with its windows' verdicts.
	Candidates []Candidate `json:"candidates"`
	SLAs       []string    `json:"slas"`
}

// Candidate is one control value tried.
type Candidate struct {
	Value         float64 `json:"value"`
	Windows       int     `json:"windows"`
	WindowsPassed int     `json:"windows_passed"`
	Passed        bool    `json:"passed"`
}

// ReadEvents reads adaptive_scale_events.jsonl; name is for errors ("FILE:LINE: ...").
func ReadEvents(r io.Reader, name string) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if e.SchemaVersion != SchemaVersion {
			return nil, fmt.Errorf("%s:%d: schema_version %d, this build reads %d", name, line, e.SchemaVersion, SchemaVersion)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}
