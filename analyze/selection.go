package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/mmapds"
)

// Selecting and grouping requests (analyze --where, --group-by; docs/metrics.md "User
// metrics"): a selection decides which profile requests every metric, count and export is
// computed over; a grouping splits the summary into one block per group. Both are functions
// over the request as evaluators see it (RequestView); package metricexpr builds them from
// CEL expressions.

// Selection selects the profile requests an analysis is over (Options.Where).
type Selection struct {
	// Expr is the selection as the user wrote it; the exports record it.
	Expr string
	// Keep reports whether the request is selected; ok false when the selection gave no
	// value for it (it is then left out, and counted). It is called from the goroutines
	// reading the logs, several at once, with a view valid only during the call.
	Keep func(r *RequestView) (keep, ok bool)
}

// Grouping splits the summary of an analysis into groups (Options.GroupBy).
type Grouping struct {
	// Expr is the grouping as the user wrote it; the exports record it.
	Expr string
	// Key gives the request's group; ok false when it has none (the request is then in the
	// whole run's results only, and counted). Called like Selection.Keep.
	Key func(r *RequestView) (key string, ok bool)
}

// MaxGroups bounds the groups of one analysis: each holds a summary in memory.
const MaxGroups = 1000

// SelectionReport says how the requests of an analysis were selected and grouped (Options.Where,
// Options.GroupBy), so the numbers say how they were made.
type SelectionReport struct {
	// Where and GroupBy are the expressions ("" for none).
	Where, GroupBy string
	// Excluded counts the profile requests the selection left out, NoValue those of them it
	// gave no value for: successful requests only, as a selection keeps every failure.
	Excluded, NoValue int64
	// Ungrouped counts the selected requests the grouping gave no group for.
	Ungrouped int64
}

// Group is the summary of the requests of one group (Options.GroupBy).
type Group struct {
	// Key is the group's value of the grouping expression.
	Key string
	// Requests counts the group's profile requests; Valid and Errors split them.
	Requests, Valid, Errors int64
	// Results are the group's metrics, like Summary.Results; rates are over the whole
	// benchmark's duration, so the groups' throughputs add up to the run's.
	Results []Result
	// ErrorCounts are the group's errors by kind.
	ErrorCounts []ErrorCount
}

// Result returns the group's result with the given tag.
func (g *Group) Result(tag string) (*Result, bool) {
	for i := range g.Results {
		if g.Results[i].Tag == tag {
			return &g.Results[i], true
		}
	}
	return nil, false
}

// selecting reports whether the analysis selects or groups requests.
func (a *analysis) selecting() bool { return a.opts.Where != nil || a.opts.GroupBy != nil }

// choice is what the selection and the grouping made of one request.
type choice struct {
	keep, noValue bool
	group         string
	grouped       bool
}

// choose applies the selection, then the grouping, to the processor's current request. A
// failed request (lost and never-sent ones included) is always kept: a selection chooses
// which successful requests the metrics describe, and never takes a failure out of the run's
// error count, its health or its gates ("ttft_ms < 5000.0" gives a failed request, which has
// no TTFT, no value; `error == ""` is false for it).
func (a *analysis) choose(p *processor) choice {
	c := choice{keep: true}
	v := p.view()
	if w := a.opts.Where; w != nil && p.m.Valid {
		keep, ok := w.Keep(v)
		c.keep, c.noValue = keep && ok, !ok
		if !c.keep {
			return c
		}
	}
	if g := a.opts.GroupBy; g != nil {
		c.group, c.grouped = g.Key(v)
	}
	return c
}

// selected is one log's (or the plan's unseen requests') share of the selection: what was
// left out, and the groups' collectors.
type selected struct {
	excluded, noValue, ungrouped int64
	groups                       map[string]*collector
	budgets                      []accum.Budget // exact values held by the groups, by MetricID
}

// tally counts c and returns the collector of its group, nil when it has none (or the request
// was left out). A new group past MaxGroups is an error.
func (s *selected) tally(a *analysis, c choice) (*collector, error) {
	switch {
	case !c.keep:
		s.excluded++
		if c.noValue {
			s.noValue++
		}
		return nil, nil
	case a.opts.GroupBy == nil:
		return nil, nil
	case !c.grouped:
		s.ungrouped++
		return nil, nil
	}
	g := s.groups[c.group]
	if g == nil {
		if s.groups == nil {
			s.groups = map[string]*collector{}
			s.budgets = newBudgets(a.reg, a.partLimit)
		}
		if len(s.groups) >= MaxGroups {
			return nil, a.tooManyGroups()
		}
		g = newCollector(a.reg, a.partLimit)
		g.budgets = s.budgets
		s.groups[c.group] = g
	}
	return g, nil
}

func (a *analysis) tooManyGroups() error {
	return inputErr("--group-by %s makes more than %d groups: group by something with fewer values", a.opts.GroupBy.Expr, MaxGroups)
}

// merge folds o into s; groups is the merged groups' collectors.
func (s *selected) merge(a *analysis, o *selected, groups map[string]*collector) error {
	s.excluded += o.excluded
	s.noValue += o.noValue
	s.ungrouped += o.ungrouped
	for _, k := range sortedKeys(o.groups) {
		g := groups[k]
		if g == nil {
			if len(groups) >= MaxGroups {
				return a.tooManyGroups()
			}
			g = newCollector(a.reg, a.opts.ExactLimit)
			groups[k] = g
		}
		g.merge(o.groups[k])
	}
	return nil
}

// unseenChooser applies the selection and the grouping to planned requests no log holds,
// over what the plan says of them (phase, session, turn, ISL) and their error (lost or
// not_sent).
type unseenChooser struct {
	a *analysis
	p *processor
}

func (a *analysis) unseenChooser() *unseenChooser {
	return &unseenChooser{a: a, p: newProcessor(requestConfig{ep: a.in.ep, tokens: a.in.ep.ProducesTokens, reg: a.reg, worker: -1})}
}

// choose gives the choice for plan record rec, unseen with error e.
func (u *unseenChooser) choose(rec *mmapds.Record, e *requestError) choice {
	u.load(rec, e)
	return u.a.choose(u.p)
}

// load makes plan record rec, unseen with error e, the processor's current request.
func (u *unseenChooser) load(rec *mmapds.Record, e *requestError) {
	p := u.p
	m := &p.m
	values, has := m.Values, m.Has
	clear(has)
	*m = requestMetrics{Index: rec.Index, Phase: rec.Phase, Session: rec.Session, Turn: rec.Turn, Worker: -1,
		IntendedNs: rec.SendOffsetNs, ReadyNs: -1, SendNs: -1, HeaderNs: -1, EndNs: -1, FirstContentNs: -1, LastContentNs: -1,
		Err: e, Values: values, Has: has}
	if rec.SendOffsetNs == mmapds.NoSendOffset {
		m.IntendedNs = -1
	}
	p.times, p.spans = p.times[:0], p.spans[:0]
	p.f = facts{rec: rec, m: m, isl: float64(rec.ISL)}
}

// groupResults summarises each group over the benchmark window durNs, in key order (numbers
// in numeric order).
func (a *analysis) groupResults(groups map[string]*collector, durNs int64) []Group {
	keys := sortedKeys(groups)
	slices.SortStableFunc(keys, compareKeys)
	out := make([]Group, 0, len(keys))
	for _, k := range keys {
		c := groups[k]
		out = append(out, Group{Key: k, Requests: c.valid + c.errors, Valid: c.valid, Errors: c.errors,
			Results: a.results(c, resultEnv{durNs: durNs}), ErrorCounts: c.errorCounts()})
	}
	return out
}

// compareKeys orders group keys: numbers by value, before other keys in byte order.
func compareKeys(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// selectionNotes say how many requests the selection left out and the grouping left
// ungrouped.
func selectionNotes(r *SelectionReport) []string {
	if r == nil {
		return nil
	}
	var out []string
	if r.Where != "" {
		out = append(out, "--where "+r.Where+": "+r.LeftOut())
	}
	if r.Ungrouped > 0 {
		out = append(out, fmt.Sprintf("--group-by %s: %d requests had no value and are in no group (they are in the whole run's results)", r.GroupBy, r.Ungrouped))
	}
	return out
}

// LeftOut says what the selection left out, for a note or a gate's line: "7 successful
// profile requests left out (3 of them because it gave no value for them); every failed
// request kept".
func (r *SelectionReport) LeftOut() string {
	n := fmt.Sprintf("%d successful profile requests left out", r.Excluded)
	if r.NoValue > 0 {
		n += fmt.Sprintf(" (%d of them because it gave no value for them)", r.NoValue)
	}
	return n + "; every failed request kept"
}

// SelectionNote is what s's --where left out, for the line of each gate judged over it
// ("--where ttft_ms < 5000.0: 3 successful profile requests left out; every failed request
// kept"); "" without a selection.
func (s *Summary) SelectionNote() string {
	if s.Selection == nil || s.Selection.Where == "" {
		return ""
	}
	return "--where " + s.Selection.Where + ": " + s.Selection.LeftOut()
}

// Excluded is the number of profile requests s's selection left out (0 without one).
func (s *Summary) Excluded() int64 {
	if s.Selection == nil {
		return 0
	}
	return s.Selection.Excluded
}
