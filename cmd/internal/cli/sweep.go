package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/profile"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/sweep"
)

// Sweep is the flag set of profile's multi-run modes: list-valued --concurrency and
// --request-rate (one run per point), repeated runs with confidence intervals, and the
// search for the most load that meets an SLA. Names and defaults are AIPerf's.
type Sweep struct {
	// FS holds the flags; compose it into a larger set with AddFlagSet.
	FS *pflag.FlagSet

	s     profile.SweepSettings
	lists []*listValue
}

// NewSweep defines the sweep, repeat and search flags on a new set.
func NewSweep() *Sweep {
	s := &Sweep{FS: NewFlagSet("sweep")}
	fs := s.FS
	fs.IntVar(&s.s.Runs, "num-profile-runs", 1, "run each point this many times (1-10) and report mean, std, CV, standard error and a Student-t confidence interval per metric, plus pooled percentiles")
	fs.Float64Var(&s.s.Level, "confidence-level", 0.95, "confidence level of the intervals (0-1)")
	fs.Float64Var(&s.s.Cooldown, "profile-run-cooldown-seconds", 0, "seconds to wait between runs: repeats, sweep points and search probes")
	fs.Float64Var(&s.s.PointCooldown, "parameter-sweep-cooldown-seconds", -1, "seconds to wait between sweep points or search probes (default: --profile-run-cooldown-seconds)")
	fs.StringVar(&s.s.ConvergenceMetric, "convergence-metric", "", "stop repeating early once this metric's runs agree (e.g. time_to_first_token); needs --num-profile-runs > 1")
	fs.StringVar(&s.s.ConvergenceStat, "convergence-stat", "avg", "statistic of --convergence-metric compared across runs (avg, p50, p99, ...)")
	fs.StringVar(&s.s.ConvergenceMode, "convergence-mode", stats.ModeCIWidth, "ci_width (relative width of the t interval) or cv (coefficient of variation)")
	fs.Float64Var(&s.s.ConvergenceThreshold, "convergence-threshold", 0, "converged at or below this (default 0.10 for ci_width, 0.05 for cv); checked after min(3, N) runs")
	fs.StringVar(&s.s.Search, "search", "", "find the most load that meets the SLAs: "+profile.SearchMaxConcurrency+", "+profile.SearchMaxRate+" or "+profile.SearchMaxGoodput+" (the concurrency of the highest --goodput)")
	fs.Float64Var(&s.s.SearchMin, "search-min", 1, "smallest concurrency or request rate the search probes")
	fs.Float64Var(&s.s.SearchMax, "search-max", 1024, "largest concurrency or request rate the search probes")
	fs.Float64Var(&s.s.Precision, "search-precision", 0.05, "bisection ends once (first failing - last passing) / first failing is below this")
	fs.IntVar(&s.s.MaxIterations, "search-max-iterations", 30, "most probes a search runs (0: no bound)")
	fs.Float64Var(&s.s.TTFTms, "ttft-sla-ms", 0, "SLA: time_to_first_token p95 <= this many ms")
	fs.Float64Var(&s.s.ITLms, "itl-sla-ms", 0, "SLA: inter_token_latency p95 <= this many ms")
	fs.Float64Var(&s.s.TPOTms, "tpot-sla-ms", 0, "SLA: time per output token (inter_token_latency, AIPerf's TPOT) p95 <= this many ms")
	fs.Float64Var(&s.s.E2Ems, "e2e-sla-ms", 0, "SLA: request_latency p99 <= this many ms")
	fs.Float64Var(&s.s.ErrorRate, "error-rate-sla", -1, "SLA: fraction of failed profile requests at most this (0-1)")
	fs.StringArrayVar(&s.s.SLAs, "search-sla", nil, "SLA METRIC:STAT:OP:VALUE, OP lt|le|gt|ge, e.g. time_to_first_token:p99:le:500 (repeatable)")
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
	items, err := sweep.ParseList(v, l.integer)
	if err != nil {
		return err
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

// Options checks the flags (profile.SweepSettings.Options). planMode is true when --plan
// gives the plan: sweeps and searches compile plans and are refused then. goodput says
// --goodput was given.
func (s *Sweep) Options(planMode, goodput bool) (*profile.SweepOptions, error) {
	st := s.s
	st.Given = func(name string) bool { return Changed(s.FS, name) }
	for _, l := range s.lists {
		st.Lists = append(st.Lists, profile.SweepList{Flag: l.flag.Name, Items: l.items})
	}
	return st.Options(planMode, goodput)
}
