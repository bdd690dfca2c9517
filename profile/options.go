package profile

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/sweep"
)

// The --search objectives (AIPerf's recipe names).
const (
	SearchMaxConcurrency = "max-concurrency-under-sla" // the most sessions in flight that meet every SLA
	SearchMaxRate        = "max-rate-under-sla"        // the highest request rate that meets every SLA
	SearchMaxGoodput     = "max-goodput"               // the concurrency of the highest goodput (--goodput)
)

// Param is one swept flag at one value.
type Param struct {
	Flag  string  // the flag: concurrency or request-rate
	Name  string  // AIPerf's parameter name: concurrency or request_rate
	Value float64 // its value
}

// Point is one sweep point: a value of every swept flag.
type Point []Param

// Describe is a point as "concurrency=8, request_rate=10".
func Describe(p Point) string {
	var parts []string
	for _, prm := range p {
		parts = append(parts, prm.Name+"="+strconv.FormatFloat(prm.Value, 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}

// SweepOptions are the checked sweep, repeat and search flags.
type SweepOptions struct {
	// Points are the sweep's points, the lists combined as a grid (concurrency outer); one
	// point, possibly empty, when no flag holds a list.
	Points []Point
	// Runs is --num-profile-runs; Level --confidence-level.
	Runs  int
	Level float64
	// Cooldown is the wait between repeats, PointCooldown between points or probes.
	Cooldown, PointCooldown time.Duration
	// Convergence, when not nil, ends the repeats early.
	Convergence *Convergence
	// Search is the --search objective ("" none), Dimension the flag it varies, Bounds the
	// probe range and precision.
	Search    string
	Dimension string
	Bounds    sweep.SearchOptions
	// SLAs are the bounds every run of a passing probe meets, as gates, and their source.
	SLAs []SLAGate
	// MaxErrorRate is --error-rate-sla; negative when not given.
	MaxErrorRate float64
}

// SLAGate is one SLA and the gate that checks it on a run.
type SLAGate struct {
	SLA  sweep.SLA
	Gate judge.Gate
}

// Convergence is the early-stop criterion of the repeats.
type Convergence struct {
	Gate      judge.Gate // metric.stat of the criterion (the operator is unused)
	Mode      string
	Threshold float64
}

// Key is the aggregate key of the criterion's metric, <tag>_<stat>.
func (c *Convergence) Key() string { return c.Gate.Metric.Tag + "_" + c.Gate.Stat }

// Stages are the three stages every run of a point goes through, as the command composed
// them from its flags (plan, replay and analyze's flag sets): profile decides what runs
// when and in which directory, the stages do the work. Each says what went wrong on the
// Options' Stderr itself and returns an exit status: 0 done, 1 failed, 2 bad input, 130
// interrupted.
type Stages interface {
	// Apply sets the plan's flags to point p (a sweep point, a search probe) and returns
	// the load the plan then has, which names the point's directory.
	Apply(p Point) (Stimulus, error)
	// Compile compiles the plan of the point last applied to path.
	Compile(path string) int
	// Replay replays the plan at planPath into the new run directory runDir (the generator
	// validation first, when asked for).
	Replay(planPath, runDir string) int
	// Analyze analyses the run in runDir (its plan at planPath), writes its exports there
	// and prints its table and gates; the summary is nil when the analysis failed.
	Analyze(planPath, runDir string) (*analyze.Summary, int)
}

// Options are one profile command's work once its flags are checked.
type Options struct {
	// Sweep holds the points, repeats and search (one point, one run: a plain profile run).
	Sweep *SweepOptions
	// SharedPlan is the --plan given, copied into each point's directory; "" compiles one
	// per point (Stages.Compile).
	SharedPlan string
	// MaxErrorRate is the largest fraction of failed profile requests a run may have and
	// still count (analyze's --max-error-rate; for a search, ErrorBound's).
	MaxErrorRate float64
	// AcceptScheduleMiss is analyze's --accept-schedule-miss: a run whose client did not
	// keep its schedule still counts, said on stderr, as analyze's exit status already
	// accepts it; by default such a run is invalid (never best, never in an aggregate).
	AcceptScheduleMiss bool
	// ExportPrefix is --profile-export-prefix: the runs' exports, and the aggregates beside
	// them, are named after it.
	ExportPrefix string
	// Stages run each point.
	Stages Stages
	// Stdout takes the tables (confidence, sweep) and where the files went; Stderr the
	// progress and what failed, one line each.
	Stdout, Stderr io.Writer
}
