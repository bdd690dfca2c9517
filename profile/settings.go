package profile

import (
	"fmt"
	"github.com/llmbench/llmbench/analyze/judge"
	"math"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/timespan"
	"github.com/llmbench/llmbench/stats"
	"github.com/llmbench/llmbench/sweep"
)

// SweepSettings are the multi-run settings as the command was given them (profile's sweep,
// repeat and search flags), before they are checked and turned into SweepOptions.
type SweepSettings struct {
	// Runs is --num-profile-runs, Level --confidence-level.
	Runs  int
	Level float64
	// Cooldown and PointCooldown are in seconds; PointCooldown -1 takes Cooldown.
	Cooldown, PointCooldown float64
	// ConvergenceMetric ("" none), Stat, Mode and Threshold end the repeats early.
	ConvergenceMetric, ConvergenceStat, ConvergenceMode string
	ConvergenceThreshold                                float64
	// Search is the --search objective ("" none); Min, Max, Precision and MaxIterations its
	// probes.
	Search                          string
	SearchMin, SearchMax, Precision float64
	MaxIterations                   int
	TTFTms, ITLms, TPOTms, E2Ems    float64 // the SLA shorthands (ms)
	ErrorRate                       float64 // --error-rate-sla; negative when not given
	SLAs                            []string
	// Lists are the plan options given as a list (a sweep, one point per value), in the
	// order of the grid (concurrency outer).
	Lists []SweepList
	// Given says whether the option of that flag name was set (a default is no SLA).
	Given func(flag string) bool
}

// SweepList is one plan option given as a list of values: --concurrency 1,2,4.
type SweepList struct {
	Flag  string
	Items []float64
}

// Options checks s. planMode is true when --plan gives the plan: sweeps and searches compile
// plans and are refused then. goodput says --goodput was given.
func (s SweepSettings) Options(planMode, goodput bool) (*SweepOptions, error) {
	o := &SweepOptions{Runs: s.Runs, Level: s.Level, MaxErrorRate: s.ErrorRate, Search: s.Search}
	if s.Runs < 1 || s.Runs > 10 {
		return nil, fmt.Errorf("--num-profile-runs %d: want 1 to 10", s.Runs)
	}
	if !(s.Level > 0 && s.Level < 1) {
		return nil, fmt.Errorf("--confidence-level %v: want a fraction between 0 and 1, e.g. 0.95", s.Level)
	}
	for _, c := range []struct {
		name string
		v    float64
		dst  *time.Duration
	}{{"profile-run-cooldown-seconds", s.Cooldown, &o.Cooldown}, {"parameter-sweep-cooldown-seconds", s.PointCooldown, &o.PointCooldown}} {
		if c.name == "parameter-sweep-cooldown-seconds" && c.v == -1 {
			o.PointCooldown = o.Cooldown
			continue
		}
		d, err := timespan.Seconds(c.name, c.v, true)
		if err != nil {
			return nil, err
		}
		*c.dst = d
	}
	if err := s.convergence(o); err != nil {
		return nil, err
	}
	o.Points = []Point{nil}
	swept := ""
	for _, l := range s.Lists {
		if len(l.Items) < 2 {
			continue
		}
		if planMode {
			return nil, fmt.Errorf("--%s lists %d values, but --plan gives one plan: a sweep compiles one plan per point", l.Flag, len(l.Items))
		}
		var grid []Point
		for _, p := range o.Points {
			for _, v := range l.Items {
				q := append(append(Point{}, p...), Param{Flag: l.Flag, Name: strings.ReplaceAll(l.Flag, "-", "_"), Value: v})
				grid = append(grid, q)
			}
		}
		o.Points, swept = grid, l.Flag
	}
	if err := s.searchOptions(o, planMode, goodput, swept); err != nil {
		return nil, err
	}
	return o, nil
}

func (s SweepSettings) convergence(o *SweepOptions) error {
	for _, name := range []string{"convergence-stat", "convergence-mode", "convergence-threshold"} {
		if s.Given(name) && s.ConvergenceMetric == "" {
			return fmt.Errorf("--%s needs --convergence-metric", name)
		}
	}
	if s.ConvergenceMetric == "" {
		return nil
	}
	if s.Runs < 2 {
		return fmt.Errorf("--convergence-metric %s needs --num-profile-runs of 2 or more (it stops repeats early)", s.ConvergenceMetric)
	}
	g, err := judge.ParseGate(s.ConvergenceMetric + "." + s.ConvergenceStat + ">=0")
	if err != nil {
		return fmt.Errorf("--convergence-metric %s --convergence-stat %s: %s", s.ConvergenceMetric, s.ConvergenceStat, gateReason(err))
	}
	c := &Convergence{Gate: g, Mode: s.ConvergenceMode, Threshold: s.ConvergenceThreshold}
	if c.Mode != stats.ModeCIWidth && c.Mode != stats.ModeCV {
		return fmt.Errorf("--convergence-mode %q: want %s or %s (AIPerf's distribution mode is not supported)", c.Mode, stats.ModeCIWidth, stats.ModeCV)
	}
	if !s.Given("convergence-threshold") {
		c.Threshold = stats.DefaultThreshold(c.Mode)
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

func (s SweepSettings) searchOptions(o *SweepOptions, planMode, goodput bool, swept string) error {
	slaFlags := []string{"ttft-sla-ms", "itl-sla-ms", "tpot-sla-ms", "e2e-sla-ms", "error-rate-sla", "search-sla",
		"search-min", "search-max", "search-precision", "search-max-iterations"}
	if s.Search == "" {
		for _, n := range slaFlags {
			if s.Given(n) {
				return fmt.Errorf("--%s needs --search (%s, %s or %s)", n, SearchMaxConcurrency, SearchMaxRate, SearchMaxGoodput)
			}
		}
		return nil
	}
	switch s.Search {
	case SearchMaxConcurrency, SearchMaxGoodput:
		o.Dimension = "concurrency"
	case SearchMaxRate:
		o.Dimension = "request-rate"
	default:
		return fmt.Errorf("--search %q: want %s, %s or %s", s.Search, SearchMaxConcurrency, SearchMaxRate, SearchMaxGoodput)
	}
	if planMode {
		return fmt.Errorf("--search %s compiles one plan per probe, but --plan gives one plan: drop one of them", s.Search)
	}
	if swept != "" {
		return fmt.Errorf("--search %s chooses the load itself: give --%s one value, not a list", s.Search, swept)
	}
	if s.Search == SearchMaxGoodput && !goodput {
		return fmt.Errorf("--search %s needs --goodput (the SLOs a good request meets)", s.Search)
	}
	o.Bounds = sweep.SearchOptions{Min: s.SearchMin, Max: s.SearchMax, Integer: o.Dimension == "concurrency", Precision: s.Precision, MaxIterations: s.MaxIterations}
	if err := o.Bounds.Check(); err != nil {
		return err
	}
	recipe := []struct {
		flag, metric, stat string
		v                  float64
	}{{"ttft-sla-ms", "time_to_first_token", "p95", s.TTFTms}, {"itl-sla-ms", "inter_token_latency", "p95", s.ITLms},
		{"tpot-sla-ms", "inter_token_latency", "p95", s.TPOTms}, {"e2e-sla-ms", "request_latency", "p99", s.E2Ems}}
	var slas []sweep.SLA
	var from []string
	for _, r := range recipe {
		if !s.Given(r.flag) {
			continue
		}
		if !(r.v > 0) || math.IsInf(r.v, 0) {
			return fmt.Errorf("--%s %v: want milliseconds (> 0)", r.flag, r.v)
		}
		slas = append(slas, sweep.SLA{Metric: r.metric, Stat: r.stat, Op: "<=", Value: r.v})
		from = append(from, "--"+r.flag)
	}
	for _, v := range s.SLAs {
		sla, err := sweep.ParseSLA(v)
		if err != nil {
			return fmt.Errorf("--search-sla %w", err)
		}
		slas = append(slas, sla)
		from = append(from, "--search-sla "+v)
	}
	for i, sla := range slas {
		g, err := judge.ParseGate(sla.String())
		if err != nil {
			return fmt.Errorf("%s: %s", from[i], gateReason(err))
		}
		o.SLAs = append(o.SLAs, SLAGate{SLA: sla, Gate: g})
	}
	if s.Given("error-rate-sla") && !(s.ErrorRate >= 0 && s.ErrorRate <= 1) {
		return fmt.Errorf("--error-rate-sla %v: want a fraction between 0 and 1", s.ErrorRate)
	}
	if s.Search != SearchMaxGoodput && len(o.SLAs) == 0 && o.MaxErrorRate < 0 {
		return fmt.Errorf("--search %s needs an SLA: --ttft-sla-ms, --itl-sla-ms, --tpot-sla-ms, --e2e-sla-ms, --error-rate-sla or --search-sla", s.Search)
	}
	return nil
}
