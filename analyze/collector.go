package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/llmbench/llmbench/analyze/accum"
	"github.com/llmbench/llmbench/rawlog"
)

// errAgg counts the requests of one error kind. Its message is that of the request with the
// lowest plan index, so it does not depend on the order logs are read in.
type errAgg struct {
	Kind     string
	Code     int
	Message  string
	minIndex uint32
	Count    int64
}

// window tracks the earliest and latest of a set of wall-clock instants.
type window struct {
	lo, hi int64
	ok     bool
}

func (w *window) add(t int64) {
	if !w.ok || t < w.lo {
		w.lo = t
	}
	if !w.ok || t > w.hi {
		w.hi = t
	}
	w.ok = true
}

func (w *window) merge(o window) {
	if o.ok {
		w.add(o.lo)
		w.add(o.hi)
	}
}

// collector accumulates the requests of one set (the whole run, or one time slice).
type collector struct {
	reg   *Registry
	limit int
	// budgets, when set, are shared with sibling collectors (the slices of one log), by
	// MetricID.
	budgets []accum.Budget
	// d are the record metrics' distributions, by MetricID; skipped counts, per user
	// metric, the requests its evaluator gave no value for.
	d       []*accum.Dist
	skipped []int64

	valid, errors, gateErrors, good int64
	badUsage                        UsageCheck // valid responses' impossible token counts
	notDue                          int64
	sent, completed                 int64
	// Token and item totals: sums of what servers reported (usage counts, items), so
	// overflow-free float sums, exact for integer totals below 2^53.
	totalISL, totalOSL            accum.Sum
	totalOut, totalReason         accum.Sum
	totalItems                    accum.Sum
	totalErrISL                   accum.Sum
	oslMismatch, usageDiscrepancy int64
	usage                         [4]accum.Sum // prompt, completion, total, reasoning
	usageSeen                     [4]bool
	gaps, sameRead                int64
	errs                          map[string]*errAgg

	// oslAsked counts valid requests with an OSL and a requested one, oslOver those whose OSL
	// exceeded the requested one by more than the mismatch tolerance (limitIgnored).
	oslAsked, oslOver int64
	// oslOverFailed counts the failed requests among oslOver: they failed once past the
	// requested length (their content events tell).
	oslOverFailed int64
	// reconnects and serverClosed sum the sent requests' raw fields (ServerConnections).
	reconnects, serverClosed int64

	// Wall-clock windows: valid requests from send to last content (AIPerf's benchmark
	// duration), sends of all sent requests, ends of completed requests.
	benchWin, sendWin, endWin window
}

func newCollector(reg *Registry, limit int) *collector {
	reg = reg.or()
	n := len(reg.defs)
	c := &collector{reg: reg, limit: limit, errs: map[string]*errAgg{}, d: make([]*accum.Dist, n)}
	if len(reg.user) > 0 {
		c.skipped = make([]int64, n)
	}
	return c
}

// newBudgets returns the shared exact-value budgets of a log's slices, max values each.
func newBudgets(reg *Registry, max int) []accum.Budget {
	return accum.Budgets(len(reg.or().defs), max)
}

func (c *collector) dist(id MetricID) *accum.Dist {
	if c.d[id] == nil {
		c.d[id] = accum.NewDist(c.limit, c.reg.defs[id].hdrScale)
		if c.budgets != nil {
			c.d[id].Share(&c.budgets[id])
		}
	}
	return c.d[id]
}

// kept reports whether m's value of metric d enters the statistics: a valid request's, or a
// failed one's of a metric that describes the client or the transfer (MetricDef.failed).
func kept(d *MetricDef, m *requestMetrics) bool { return m.Valid || d.failed }

// add accumulates one profile-phase request. wall is the run's wall-clock zero.
func (c *collector) add(m *requestMetrics) {
	if m.NotDue {
		c.notDue++
		return
	}
	wall := m.StartUnixNs
	for _, id := range c.reg.records {
		if !m.Has[id] || !kept(&c.reg.defs[id], m) {
			continue
		}
		c.dist(id).Add(m.Values[id])
	}
	for _, u := range c.reg.user {
		if !m.Has[u.id] && (m.Valid || (u.failed && m.Sent)) {
			c.skipped[u.id]++
		}
	}
	if len(m.ICL) > 0 {
		d := c.dist(MInterChunkLatency)
		for _, g := range m.ICL {
			d.Add(float64(g))
		}
		c.gaps += int64(len(m.ICL))
		c.sameRead += int64(m.SameReadGaps)
	}
	if m.Valid && len(m.EPR) > 0 {
		d := c.dist(MEventsPerRead)
		for _, n := range m.EPR {
			d.Add(float64(n))
		}
	}
	if m.Sent {
		c.sent++
		c.sendWin.add(wall + m.SendNs)
		c.reconnects += int64(m.Reconnects)
		if m.ServerClosed {
			c.serverClosed++
		}
	}
	if m.Outcome == rawlog.OutcomeCompleted && m.EndNs >= 0 {
		c.completed++
		c.endWin.add(wall + m.EndNs)
	}
	if !m.Valid {
		c.addError(m.Err, m.Index, 1)
		if !(m.Err.Kind == "cancelled" && m.CancelAfterNs > 0) {
			c.gateErrors++
		}
		if m.Has[MErrorISL] {
			c.totalErrISL.Add(m.Values[MErrorISL])
		}
		if m.Outcome == rawlog.OutcomeCompleted && m.RequestedOSL > 0 && float64(m.ContentEvents)-float64(m.RequestedOSL) > oslTolerance(m.RequestedOSL) {
			// It failed once already past the requested length (llama.cpp's "Context size
			// has been exceeded." after an ignored limit): its content events are a lower
			// bound of its output.
			c.oslAsked++
			c.oslOver++
			c.oslOverFailed++
		}
		return
	}
	c.valid++
	c.badUsage.add(m.BadUsage)
	if m.Good {
		c.good++
	}
	c.benchWin.add(wall + m.SendNs)
	c.benchWin.add(wall + m.SendNs + int64(m.Values[MRequestLatency]))
	c.totalISL.Add(math.Trunc(m.Values[MInputSequenceLength]))
	c.totalOSL.Add(math.Trunc(m.Values[MOutputSequenceLength]))
	c.totalOut.Add(math.Trunc(m.Values[MOutputTokenCount]))
	c.totalReason.Add(math.Trunc(m.Values[MReasoningTokenCount]))
	c.totalItems.Add(math.Trunc(m.Values[MItemCount]))
	if m.Has[MOutputSequenceLength] && m.RequestedOSL > 0 {
		req := float64(m.RequestedOSL)
		tol := oslTolerance(m.RequestedOSL)
		if math.Abs(m.Values[MOutputSequenceLength]-req) > tol {
			c.oslMismatch++
		}
		c.oslAsked++
		if m.Values[MOutputSequenceLength]-req > tol {
			c.oslOver++
		}
	}
	for _, id := range [...]MetricID{MUsagePromptTokensDiffPct, MUsageCompletionTokensDiffPct, MUsageReasoningTokensDiffPct} {
		if m.Has[id] && m.Values[id] > 10 {
			c.usageDiscrepancy++
			break
		}
	}
	for i, id := range [...]MetricID{MUsagePromptTokens, MUsageCompletionTokens, MUsageTotalTokens, MUsageReasoningTokens} {
		if m.Has[id] {
			c.usage[i].Add(math.Trunc(m.Values[id]))
			c.usageSeen[i] = true
		}
	}
}

// oslTolerance is how far an output may be from the requested length before it counts as a
// mismatch (osl_mismatch_count): min(5 %, 50 tokens).
func oslTolerance(requested int) float64 { return math.Min(float64(requested)*0.05, 50) }

// addError counts n errors like e; index is the plan index of the request.
func (c *collector) addError(e *requestError, index uint32, n int64) {
	a := c.errs[e.Kind]
	if a == nil {
		c.errs[e.Kind] = &errAgg{Kind: e.Kind, Code: e.Code, Message: e.Message, minIndex: index, Count: n}
		c.errors += n
		return
	}
	a.Count += n
	if index < a.minIndex {
		a.minIndex, a.Message, a.Code = index, e.Message, e.Code
	}
	c.errors += n
}

// merge folds o into c.
func (c *collector) merge(o *collector) {
	for id := range c.d {
		if o.d[id] == nil {
			continue
		}
		c.dist(MetricID(id)).Merge(o.d[id])
	}
	for id, n := range o.skipped {
		c.skipped[id] += n
	}
	c.valid += o.valid
	c.badUsage.merge(o.badUsage)
	c.notDue += o.notDue
	c.gateErrors += o.gateErrors
	c.good += o.good
	c.sent += o.sent
	c.completed += o.completed
	c.totalISL.Merge(o.totalISL)
	c.totalOSL.Merge(o.totalOSL)
	c.totalOut.Merge(o.totalOut)
	c.totalReason.Merge(o.totalReason)
	c.totalItems.Merge(o.totalItems)
	c.totalErrISL.Merge(o.totalErrISL)
	c.oslMismatch += o.oslMismatch
	c.oslAsked += o.oslAsked
	c.oslOver += o.oslOver
	c.oslOverFailed += o.oslOverFailed
	c.reconnects += o.reconnects
	c.serverClosed += o.serverClosed
	c.usageDiscrepancy += o.usageDiscrepancy
	for i := range c.usage {
		c.usage[i].Merge(o.usage[i])
		c.usageSeen[i] = c.usageSeen[i] || o.usageSeen[i]
	}
	c.gaps += o.gaps
	c.sameRead += o.sameRead
	for _, k := range sortedKeys(o.errs) {
		a := o.errs[k]
		c.addError(&requestError{Kind: a.Kind, Code: a.Code, Message: a.Message}, a.minIndex, a.Count)
	}
	c.benchWin.merge(o.benchWin)
	c.sendWin.merge(o.sendWin)
	c.endWin.merge(o.endWin)
}

// sortedKeys returns m's keys in ascending order, so that output built from a map does not
// depend on Go's randomized iteration order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ErrorCount is one line of the error summary.
type ErrorCount struct {
	Kind    string
	Code    int
	Message string
	Count   int64
}

// errorCounts lists the error kinds, most frequent first.
func (c *collector) errorCounts() []ErrorCount {
	out := make([]ErrorCount, 0, len(c.errs))
	for _, k := range sortedKeys(c.errs) {
		a := c.errs[k]
		out = append(out, ErrorCount{Kind: a.Kind, Code: a.Code, Message: a.Message, Count: a.Count})
	}
	slices.SortStableFunc(out, func(a, b ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
	return out
}
