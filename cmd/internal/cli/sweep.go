package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/plan"
	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/sweep"
)

// Sweep is the flag set of profile's multi-run modes: list-valued --concurrency and
// --request-rate (one run per point), repeated runs with confidence intervals, and the
// search for the most load that meets an SLA. Names and defaults are AIPerf's.
type Sweep struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet

	runs, maxIter                   int
	level, cooldown, pointCooldown  float64
	convMetric, convStat, convMode  string
	convThreshold                   float64
	search                          string
	searchMin, searchMax, precision float64
	ttft, itl, tpot, e2e, errRate   float64
	slas                            []string
	lists                           []*listValue
}

// NewSweep defines the sweep, repeat and search flags on a new set.
func NewSweep() *Sweep {
	s := &Sweep{FS: NewFlagSet("sweep")}
	fs := s.FS
	fs.IntVar(&s.runs, "num-profile-runs", 1, "run each point this many times (1-10) and report mean, std, CV, standard error and a Student-t confidence interval per metric, plus pooled percentiles")
	fs.Float64Var(&s.level, "confidence-level", 0.95, "confidence level of the intervals (0-1)")
	fs.Float64Var(&s.cooldown, "profile-run-cooldown-seconds", 0, "seconds to wait between runs: repeats, sweep points and search probes")
	fs.Float64Var(&s.pointCooldown, "parameter-sweep-cooldown-seconds", -1, "seconds to wait between sweep points or search probes (default: --profile-run-cooldown-seconds)")
	fs.StringVar(&s.convMetric, "convergence-metric", "", "stop repeating early once this metric's runs agree (e.g. time_to_first_token); needs --num-profile-runs > 1")
	fs.StringVar(&s.convStat, "convergence-stat", "avg", "statistic of --convergence-metric compared across runs (avg, p50, p99, ...)")
	fs.StringVar(&s.convMode, "convergence-mode", sweep.ModeCIWidth, "ci_width (relative width of the t interval) or cv (coefficient of variation)")
	fs.Float64Var(&s.convThreshold, "convergence-threshold", 0, "converged at or below this (default 0.10 for ci_width, 0.05 for cv); checked after min(3, N) runs")
	fs.StringVar(&s.search, "search", "", "find the most load that meets the SLAs: "+profile.SearchMaxConcurrency+", "+profile.SearchMaxRate+" or "+profile.SearchMaxGoodput+" (the concurrency of the highest --goodput)")
	fs.Float64Var(&s.searchMin, "search-min", 1, "smallest concurrency or request rate the search probes")
	fs.Float64Var(&s.searchMax, "search-max", 1024, "largest concurrency or request rate the search probes")
	fs.Float64Var(&s.precision, "search-precision", 0.05, "bisection ends once (first failing - last passing) / first failing is below this")
	fs.IntVar(&s.maxIter, "search-max-iterations", 30, "most probes a search runs (0: no bound)")
	fs.Float64Var(&s.ttft, "ttft-sla-ms", 0, "SLA: time_to_first_token p95 <= this many ms")
	fs.Float64Var(&s.itl, "itl-sla-ms", 0, "SLA: inter_token_latency p95 <= this many ms")
	fs.Float64Var(&s.tpot, "tpot-sla-ms", 0, "SLA: time per output token (inter_token_latency, AIPerf's TPOT) p95 <= this many ms")
	fs.Float64Var(&s.e2e, "e2e-sla-ms", 0, "SLA: request_latency p99 <= this many ms")
	fs.Float64Var(&s.errRate, "error-rate-sla", -1, "SLA: fraction of failed profile requests at most this (0-1)")
	fs.StringArrayVar(&s.slas, "search-sla", nil, "SLA METRIC:STAT:OP:VALUE, OP lt|le|gt|ge, e.g. time_to_first_token:p99:le:500 (repeatable)")
	return s
}

// Lists gives the --concurrency and --request-rate flags of fs (the plan flags, also in
// profile's composed set) AIPerf's list syntax: "1,2,4" is a sweep, one point per value.
// A single value behaves as before.
func (s *Sweep) Lists(fs *pflag.FlagSet) {
	for _, name := range []string{"concurrency", "request-rate"} {
		f := fs.Lookup(name)
		l := &listValue{Value: f.Value, flag: f, integer: name == "concurrency"}
		f.Value = l
		f.Usage += "; a comma list (1,2,4) is a sweep, one run per value"
		s.lists = append(s.lists, l)
	}
}

// listValue wraps a plan flag's value: Set takes a list, the plan sees one point at a time.
type listValue struct {
	pflag.Value
	flag    *pflag.Flag
	integer bool
	items   []float64 // the values given, nil when the flag was not set
}

func (l *listValue) Set(v string) error {
	if !strings.Contains(v, ",") {
		l.items = nil
		return l.Value.Set(v) // one value: the plan flag's own parsing, checks and messages
	}
	var items []float64
	if l.integer {
		ints, err := sweep.ParseInts(v)
		if err != nil {
			return err
		}
		for _, i := range ints {
			items = append(items, float64(i))
		}
	} else {
		fl, err := sweep.ParseFloats(v)
		if err != nil {
			return err
		}
		items = fl
	}
	l.items = items
	return l.set(items[0])
}

// Items are the values of a list given (a sweep), formatted; nil for one value.
func (l *listValue) Items() []string {
	if len(l.items) < 2 {
		return nil
	}
	out := make([]string, len(l.items))
	for i, v := range l.items {
		out[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return out
}

// set gives the plan flag one value, as if it had been given alone.
func (l *listValue) set(v float64) error {
	l.flag.Changed = true
	return l.Value.Set(strconv.FormatFloat(v, 'f', -1, 64))
}

// Apply sets the plan flags to the point's values.
func (s *Sweep) Apply(p profile.Point) error {
	for _, prm := range p {
		if err := s.list(prm.Flag).set(prm.Value); err != nil {
			return fmt.Errorf("--%s %v: %w", prm.Flag, prm.Value, err)
		}
	}
	return nil
}

func (s *Sweep) list(flag string) *listValue {
	for _, l := range s.lists {
		if l.flag.Name == flag {
			return l
		}
	}
	panic("cli: Sweep.Lists was not called for --" + flag)
}

// Options checks the flags. planMode is true when --plan gives the plan: sweeps and
// searches compile plans and are refused then. goodput says --goodput was given.
func (s *Sweep) Options(planMode, goodput bool) (*profile.SweepOptions, error) {
	o := &profile.SweepOptions{Runs: s.runs, Level: s.level, MaxErrorRate: s.errRate, Search: s.search}
	if s.runs < 1 || s.runs > 10 {
		return nil, fmt.Errorf("--num-profile-runs %d: want 1 to 10", s.runs)
	}
	if !(s.level > 0 && s.level < 1) {
		return nil, fmt.Errorf("--confidence-level %v: want a fraction between 0 and 1, e.g. 0.95", s.level)
	}
	for _, c := range []struct {
		name string
		v    float64
		dst  *time.Duration
	}{{"profile-run-cooldown-seconds", s.cooldown, &o.Cooldown}, {"parameter-sweep-cooldown-seconds", s.pointCooldown, &o.PointCooldown}} {
		if c.name == "parameter-sweep-cooldown-seconds" && c.v == -1 {
			o.PointCooldown = o.Cooldown
			continue
		}
		d, err := plan.Seconds(c.name, c.v, true)
		if err != nil {
			return nil, err
		}
		*c.dst = d
	}
	if err := s.convergence(o); err != nil {
		return nil, err
	}
	o.Points = []profile.Point{nil}
	swept := ""
	for _, l := range s.lists {
		if len(l.items) < 2 {
			continue
		}
		if planMode {
			return nil, fmt.Errorf("--%s lists %d values, but --plan gives one plan: a sweep compiles one plan per point", l.flag.Name, len(l.items))
		}
		var grid []profile.Point
		for _, p := range o.Points {
			for _, v := range l.items {
				q := append(append(profile.Point{}, p...), profile.Param{Flag: l.flag.Name, Name: strings.ReplaceAll(l.flag.Name, "-", "_"), Value: v})
				grid = append(grid, q)
			}
		}
		o.Points, swept = grid, l.flag.Name
	}
	if err := s.searchOptions(o, planMode, goodput, swept); err != nil {
		return nil, err
	}
	return o, nil
}

func (s *Sweep) convergence(o *profile.SweepOptions) error {
	for _, name := range []string{"convergence-stat", "convergence-mode", "convergence-threshold"} {
		if Changed(s.FS, name) && s.convMetric == "" {
			return fmt.Errorf("--%s needs --convergence-metric", name)
		}
	}
	if s.convMetric == "" {
		return nil
	}
	if s.runs < 2 {
		return fmt.Errorf("--convergence-metric %s needs --num-profile-runs of 2 or more (it stops repeats early)", s.convMetric)
	}
	g, err := analyze.ParseGate(s.convMetric + "." + s.convStat + ">=0")
	if err != nil {
		return fmt.Errorf("--convergence-metric %s --convergence-stat %s: %s", s.convMetric, s.convStat, gateReason(err))
	}
	c := &profile.Convergence{Gate: g, Mode: s.convMode, Threshold: s.convThreshold}
	if c.Mode != sweep.ModeCIWidth && c.Mode != sweep.ModeCV {
		return fmt.Errorf("--convergence-mode %q: want %s or %s (AIPerf's distribution mode is not supported)", c.Mode, sweep.ModeCIWidth, sweep.ModeCV)
	}
	if !Changed(s.FS, "convergence-threshold") {
		c.Threshold = sweep.DefaultThreshold(c.Mode)
	} else if !(c.Threshold > 0) || math.IsInf(c.Threshold, 0) {
		return fmt.Errorf("--convergence-threshold %v: must be positive", c.Threshold)
	}
	o.Convergence = c
	return nil
}

// gateReason is what a --gate parse error says after the expression, for another flag.
func gateReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

func (s *Sweep) searchOptions(o *profile.SweepOptions, planMode, goodput bool, swept string) error {
	slaFlags := []string{"ttft-sla-ms", "itl-sla-ms", "tpot-sla-ms", "e2e-sla-ms", "error-rate-sla", "search-sla",
		"search-min", "search-max", "search-precision", "search-max-iterations"}
	if s.search == "" {
		for _, n := range slaFlags {
			if Changed(s.FS, n) {
				return fmt.Errorf("--%s needs --search (%s, %s or %s)", n, profile.SearchMaxConcurrency, profile.SearchMaxRate, profile.SearchMaxGoodput)
			}
		}
		return nil
	}
	switch s.search {
	case profile.SearchMaxConcurrency, profile.SearchMaxGoodput:
		o.Dimension = "concurrency"
	case profile.SearchMaxRate:
		o.Dimension = "request-rate"
	default:
		return fmt.Errorf("--search %q: want %s, %s or %s", s.search, profile.SearchMaxConcurrency, profile.SearchMaxRate, profile.SearchMaxGoodput)
	}
	if planMode {
		return fmt.Errorf("--search %s compiles one plan per probe, but --plan gives one plan: drop one of them", s.search)
	}
	if swept != "" {
		return fmt.Errorf("--search %s chooses the load itself: give --%s one value, not a list", s.search, swept)
	}
	if s.search == profile.SearchMaxGoodput && !goodput {
		return fmt.Errorf("--search %s needs --goodput (the SLOs a good request meets)", s.search)
	}
	o.Bounds = sweep.SearchOptions{Min: s.searchMin, Max: s.searchMax, Integer: o.Dimension == "concurrency", Precision: s.precision, MaxIterations: s.maxIter}
	if err := o.Bounds.Check(); err != nil {
		return err
	}
	recipe := []struct {
		flag, metric, stat string
		v                  float64
	}{{"ttft-sla-ms", "time_to_first_token", "p95", s.ttft}, {"itl-sla-ms", "inter_token_latency", "p95", s.itl},
		{"tpot-sla-ms", "inter_token_latency", "p95", s.tpot}, {"e2e-sla-ms", "request_latency", "p99", s.e2e}}
	var slas []sweep.SLA
	var from []string
	for _, r := range recipe {
		if !Changed(s.FS, r.flag) {
			continue
		}
		if !(r.v > 0) || math.IsInf(r.v, 0) {
			return fmt.Errorf("--%s %v: want milliseconds (> 0)", r.flag, r.v)
		}
		slas = append(slas, sweep.SLA{Metric: r.metric, Stat: r.stat, Op: "<=", Value: r.v})
		from = append(from, "--"+r.flag)
	}
	for _, v := range s.slas {
		sla, err := sweep.ParseSLA(v)
		if err != nil {
			return fmt.Errorf("--search-sla %w", err)
		}
		slas = append(slas, sla)
		from = append(from, "--search-sla "+v)
	}
	for i, sla := range slas {
		g, err := analyze.ParseGate(sla.String())
		if err != nil {
			return fmt.Errorf("%s: %s", from[i], gateReason(err))
		}
		o.SLAs = append(o.SLAs, profile.SLAGate{SLA: sla, Gate: g})
	}
	if Changed(s.FS, "error-rate-sla") && !(s.errRate >= 0 && s.errRate <= 1) {
		return fmt.Errorf("--error-rate-sla %v: want a fraction between 0 and 1", s.errRate)
	}
	if s.search != profile.SearchMaxGoodput && len(o.SLAs) == 0 && o.MaxErrorRate < 0 {
		return fmt.Errorf("--search %s needs an SLA: --ttft-sla-ms, --itl-sla-ms, --tpot-sla-ms, --e2e-sla-ms, --error-rate-sla or --search-sla", s.search)
	}
	return nil
}
