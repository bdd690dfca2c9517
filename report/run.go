package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/output"
	"github.com/llmbench/llmbench/internal/numfmt"
)

// PageVersion is the version of the run page's data JSON (docs/report.md).
const PageVersion = 1

// GateLine is one release-gate line exactly as analyze printed it.
type GateLine struct {
	Text string `json:"text"`
	OK   bool   `json:"ok"`
}

// RunInput is what a run page is drawn from.
type RunInput struct {
	Summary *analyze.Summary
	// Records are the per-request records (nil: the page has the tables only).
	Records *Records
	// Gates are the gate lines analyze printed, the error-rate gate first.
	Gates []GateLine
}

// RunPage is the data JSON of a run page.
type RunPage struct {
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Run     Info   `json:"run"`
	// Verdict is output.VerdictLine, verbatim.
	Verdict string `json:"verdict"`
	// Checks are the three validations of the benchmark claim: generator, shape, thresholds.
	Checks      []Check    `json:"checks"`
	Trustworthy *bool      `json:"trustworthy"`
	Gates       []GateLine `json:"gates"`
	Table       []Row      `json:"table"`
	// Metrics are the values the table's cells and the captions are formatted from, as the
	// JSON export has them (each metric block of profile_export_aiperf.json: a single value
	// as avg), in the summary's order: the page's source of truth, which
	// TestRunPageEqualsJSON holds against the export.
	Metrics []MetricValues `json:"metrics"`
	// Selection says how the requests were selected and grouped (--where, --group-by), ""
	// when they were not; Groups are the groups' tables (the page's selector switches the
	// metrics table to one).
	Selection string       `json:"selection,omitempty"`
	Groups    []GroupTable `json:"groups,omitempty"`
	Errors    Errors       `json:"errors"`
	Notes     []string     `json:"notes"`
	GPUs      []GPURow     `json:"gpus"`
	// Server holds the server metrics (Summary.ServerMetrics); ServerNote says why there are none.
	Server     []ServerRow `json:"server"`
	ServerNote string      `json:"server_note,omitempty"`
	Slices     *SliceTable `json:"slices"`
	Charts     []Chart     `json:"charts"`
	// Sessions is the session section of a graph plan's run (sessions.go); absent otherwise.
	Sessions *Sessions `json:"sessions,omitempty"`
}

// MetricValues is one result of the run: a single value (Avg; the statistics null) or a
// distribution's statistics.
type MetricValues struct {
	Tag    string `json:"tag"`
	Unit   string `json:"unit"`
	Single bool   `json:"single"`
	Count  int64  `json:"count"`
	Avg    Number `json:"avg"`
	Min    Number `json:"min"`
	Max    Number `json:"max"`
	Std    Number `json:"std"`
	P50    Number `json:"p50"`
	P90    Number `json:"p90"`
	P99    Number `json:"p99"`
}

// metricValues are the results of s as MetricValues.
func metricValues(s *analyze.Summary) []MetricValues {
	out := make([]MetricValues, 0, len(s.Results))
	nan := Number(math.NaN())
	for _, r := range s.Results {
		if r.Stats == nil {
			out = append(out, MetricValues{Tag: r.Tag, Unit: r.Unit, Single: true, Avg: Number(r.Value), Min: nan, Max: nan, Std: nan, P50: nan, P90: nan, P99: nan})
			continue
		}
		st := r.Stats
		out = append(out, MetricValues{Tag: r.Tag, Unit: r.Unit, Count: st.Count, Avg: Number(st.Avg), Min: Number(st.Min), Max: Number(st.Max),
			Std: Number(st.Std), P50: Number(st.P[4]), P90: Number(st.P[6]), P99: Number(st.P[8])})
	}
	return out
}

// GroupTable is one group's metrics table (analyze --group-by).
type GroupTable struct {
	// Name is "EXPR = KEY"; Line counts its requests and errors.
	Name  string `json:"name"`
	Line  string `json:"line"`
	Table []Row  `json:"table"`
}

// Info identifies a run.
type Info struct {
	Name        string `json:"name"`
	Model       string `json:"model"`
	Endpoint    string `json:"endpoint"`
	Streaming   bool   `json:"streaming"`
	PlanHash    string `json:"plan_hash"`
	Concurrency int    `json:"concurrency"`
	OfferedRate Number `json:"offered_rate"`
	Start       string `json:"start"`
	DurationS   Number `json:"duration_s"`
	Tool        string `json:"tool"`
	CommandLine string `json:"command_line"`
}

// Check is one validation, green (validated), red (failed) or grey (not validated).
type Check struct {
	Name     string            `json:"name"`
	Status   string            `json:"status"`
	Evidence string            `json:"evidence"`
	Figures  map[string]Number `json:"figures,omitempty"`
}

// Row is one console-table row and the metric's definition (docs/metrics.md).
type Row struct {
	Tag        string   `json:"tag"`
	Cells      []string `json:"cells"`
	Definition string   `json:"definition"`
	// Note explains a figure of the row that surprises at first sight, shown beside it ("" for
	// none): a minimum of 0 ms between events that arrived in one socket read.
	Note string `json:"note,omitempty"`
}

// sameReadTags are the metrics whose values include the 0 ms gaps between events that arrived
// in one socket read (docs/metrics.md "same_read_chunk_gap_pct").
var sameReadTags = map[string]bool{"time_to_second_token": true, "inter_chunk_latency": true}

// rowNote is the note of tag's row in s: why its minimum is 0 when same-read gaps made it so.
func rowNote(s *analyze.Summary, tag string) string {
	if !sameReadTags[tag] {
		return ""
	}
	r, ok := s.Result(tag)
	if !ok || r.Stats == nil || r.Stats.Count == 0 || r.Stats.Min != 0 {
		return ""
	}
	pct, ok := s.Result("same_read_chunk_gap_pct")
	if !ok || !(pct.Value > 0) {
		return ""
	}
	return "min 0 ms: " + numfmt.Format(pct.Value) + " % of the gaps between events are 0 ms because several events arrived in one socket read (loopback, a fast server): they are not real token gaps"
}

// Errors are the failed requests by kind.
type Errors struct {
	Total   int64      `json:"total"`
	Profile int64      `json:"profile"`
	Kinds   []ErrorRow `json:"kinds"`
}

// ErrorRow is one error kind: its count and first message.
type ErrorRow struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Count   int64  `json:"count"`
	Message string `json:"message"`
}

// GPURow is one GPU's telemetry over the profile window.
type GPURow struct {
	Name      string `json:"name"`
	Power     *Stat  `json:"power_w"`
	Util      *Stat  `json:"utilization_pct"`
	MemUsedGB *Stat  `json:"memory_used_gb"`
	SMClock   *Stat  `json:"sm_clock_mhz"`
	Temp      *Stat  `json:"temperature_c"`
	EnergyJ   Number `json:"energy_j"`
}

// Stat is a distribution's avg, min, max and p99.
type Stat struct {
	Avg Number `json:"avg"`
	Min Number `json:"min"`
	Max Number `json:"max"`
	P99 Number `json:"p99"`
}

// SliceTable is the per-time-slice table (--slice-duration).
type SliceTable struct {
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

//go:embed definitions.json
var definitionsJSON []byte

// definitions maps metric tags to their one-line definition in docs/metrics.md.
var definitions = func() map[string]string {
	m := map[string]string{}
	if err := json.Unmarshal(definitionsJSON, &m); err != nil {
		panic("report: definitions.json: " + err.Error()) // embedded: caught by any test
	}
	return m
}()

// rows are the table rows of console rows cr, with each metric's definition.
func rows(s *analyze.Summary, cr []output.ConsoleRow) []Row {
	out := []Row{}
	for _, r := range cr {
		def := definitions[r.Tag]
		if d, ok := s.Registry.Lookup(r.Tag); ok && (d.User || d.Origin == analyze.OriginServer) {
			def = d.Description // a user or server-trace metric: as its definition said
		}
		out = append(out, Row{Tag: r.Tag, Cells: r.Cells, Definition: def, Note: rowNote(s, r.Tag)})
	}
	return out
}

// BuildRun computes the run page's data from in.
func BuildRun(in RunInput) *RunPage {
	s := in.Summary
	p := &RunPage{Version: PageVersion, Kind: "run", Run: info(s), Verdict: output.VerdictLine(s), Gates: in.Gates,
		Notes: s.Notes}
	if p.Gates == nil {
		p.Gates = []GateLine{}
	}
	if p.Notes == nil {
		p.Notes = []string{}
	}
	p.Title = "llmbench report: " + p.Run.Name
	p.Checks, p.Trustworthy = checks(s, in.Gates)
	p.Table = rows(s, output.ConsoleRows(s))
	p.Metrics = metricValues(s)
	if sel := s.Selection; sel != nil {
		var parts []string
		if sel.Where != "" {
			parts = append(parts, fmt.Sprintf("--where %s (%d profile requests left out)", sel.Where, sel.Excluded))
		}
		if sel.GroupBy != "" {
			parts = append(parts, fmt.Sprintf("--group-by %s (%d groups)", sel.GroupBy, len(s.Groups)))
		}
		p.Selection = strings.Join(parts, "; ")
		for i := range s.Groups {
			g := &s.Groups[i]
			p.Groups = append(p.Groups, GroupTable{Name: sel.GroupBy + " = " + g.Key, Line: output.GroupLine(s, g),
				Table: rows(s, output.GroupConsoleRows(s, g))})
		}
	}
	p.Errors = Errors{Total: s.Counts.Errors, Profile: s.Counts.Profile, Kinds: []ErrorRow{}}
	for _, e := range s.Errors {
		p.Errors.Kinds = append(p.Errors.Kinds, ErrorRow{Kind: e.Kind, Code: e.Code, Count: e.Count, Message: e.Message})
	}
	p.GPUs = []GPURow{}
	for _, g := range s.GPUs {
		name := fmt.Sprintf("GPU %d", g.GPU)
		if g.Name != "" {
			name += " " + g.Name
		}
		p.GPUs = append(p.GPUs, GPURow{Name: name, Power: stat(g.Power), Util: stat(g.Util), MemUsedGB: stat(g.MemUsedGB),
			SMClock: stat(g.SMClock), Temp: stat(g.Temp), EnergyJ: Number(g.EnergyJ)})
	}
	p.Server, p.ServerNote = serverRows(s)
	p.Slices = sliceTable(s)
	p.Charts = runCharts(s, in.Records)
	p.Sessions = sessionsSection(s)
	if p.Table == nil {
		p.Table = []Row{}
	}
	if p.Charts == nil {
		p.Charts = []Chart{}
	}
	return p
}

func info(s *analyze.Summary) Info {
	name := ""
	if len(s.RunDirs) > 0 {
		name = strings.Join(s.RunDirs, ", ")
	}
	i := Info{Name: name, Model: s.Model, Endpoint: s.Endpoint, Streaming: s.Streaming, PlanHash: s.PlanHash,
		Concurrency: s.Concurrency, OfferedRate: Number(s.OfferedRate), Tool: strings.TrimSpace(s.Tool + " " + s.ToolVersion),
		CommandLine: s.CommandLine}
	if s.StartUnixNs > 0 {
		i.Start = time.Unix(0, s.StartUnixNs).UTC().Format(time.RFC3339)
		i.DurationS = Number(float64(s.EndUnixNs-s.StartUnixNs) / 1e9)
	}
	return i
}

func stat(st *analyze.Stats) *Stat {
	if st == nil || st.Count == 0 {
		return nil
	}
	return &Stat{Avg: Number(st.Avg), Min: Number(st.Min), Max: Number(st.Max), P99: Number(st.P[8])}
}

// Claim part names, as the page shows them.
const (
	checkGenerator  = "Load generator"
	checkShape      = "Workload shape"
	checkThresholds = "Thresholds"
)

// checks are the three validations: from the benchmark claim when analyze evaluated one,
// else from the verdict (generator) and the gates (thresholds), the shape not validated.
func checks(s *analyze.Summary, gates []GateLine) ([]Check, *bool) {
	if c := s.Claim; c != nil {
		part := func(name string, p analyze.ClaimPart) Check {
			var figs map[string]Number
			if p.Figures != nil {
				figs = make(map[string]Number, len(p.Figures))
				for k, v := range p.Figures {
					figs[k] = Number(v)
				}
			}
			return Check{Name: name, Status: p.Status, Evidence: p.Evidence, Figures: figs}
		}
		t := c.Trustworthy
		return []Check{part(checkGenerator, c.Generator), part(checkShape, c.Shape), part(checkThresholds, c.Thresholds)}, &t
	}
	gen := Check{Name: checkGenerator, Status: analyze.StatusNotValidated, Evidence: output.VerdictLine(s), Figures: map[string]Number{}}
	v := s.Verdict
	switch {
	case v.Known && v.Kept:
		gen.Status = analyze.StatusValidated
	case v.Known:
		gen.Status = analyze.StatusFailed
	}
	if v.LagKnown {
		gen.Figures["dispatch_lag_p99_ms"] = Number(v.DispatchLagP99Ms)
	}
	if v.CPUKnown {
		gen.Figures["busiest_worker_cpu_pct"] = Number(v.BusiestWorkerPct)
	}
	if r, ok := s.Result("same_read_chunk_gap_pct"); ok {
		gen.Figures["same_read_chunk_gap_pct"] = Number(r.Value)
	}
	shape := Check{Name: checkShape, Status: analyze.StatusNotValidated,
		Evidence: "not available: this analysis evaluated no benchmark claim, so the workload's shape was not checked against the plan"}
	th := Check{Name: checkThresholds, Status: analyze.StatusNotValidated, Evidence: "not available: no gate was checked"}
	if len(gates) > 0 {
		th.Status = analyze.StatusValidated
		var lines []string
		for _, g := range gates {
			if !g.OK {
				th.Status = analyze.StatusFailed
			}
			lines = append(lines, g.Text)
		}
		th.Evidence = strings.Join(lines, "; ")
	}
	return []Check{gen, shape, th}, nil
}

// sliceTable is the time-slice table, nil without slices.
func sliceTable(s *analyze.Summary) *SliceTable {
	if len(s.Slices) == 0 {
		return nil
	}
	cols := []struct{ tag, stat string }{{"request_count", ""}, {"time_to_first_token", "p50"}, {"time_to_first_token", "p99"},
		{"inter_token_latency", "p50"}, {"request_latency", "p99"}, {"output_token_throughput", ""}}
	t := &SliceTable{Header: []string{"slice", "start (s)"}}
	for _, c := range cols {
		h := c.tag
		if c.stat != "" {
			h += " " + c.stat
		}
		if d, ok := analyze.LookupMetric(c.tag); ok && d.Unit != "" {
			h += " (" + d.Unit + ")"
		}
		t.Header = append(t.Header, h)
	}
	for _, sl := range s.Slices {
		row := []string{fmt.Sprint(sl.Index), numfmt.Format(float64(sl.StartUnixNs-s.StartUnixNs) / 1e9)}
		for _, c := range cols {
			row = append(row, numfmt.Format(sliceValue(sl, c.tag, c.stat)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// sliceValue is a slice's value of tag (a single value, or stat "p50"/"p99" of a distribution).
func sliceValue(sl analyze.Slice, tag, stat string) float64 {
	for _, r := range sl.Results {
		if r.Tag != tag {
			continue
		}
		switch {
		case r.Stats == nil:
			return r.Value
		case stat == "p50":
			return r.Stats.P[4]
		case stat == "p99":
			return r.Stats.P[8]
		}
		return r.Stats.Avg
	}
	return math.NaN()
}
