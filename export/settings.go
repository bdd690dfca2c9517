package export

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/analyze/judge"
	"github.com/llmbench/llmbench/analyze/servertime"
	"github.com/llmbench/llmbench/columnar"
	"github.com/llmbench/llmbench/metricexpr"
)

// Settings are analyze's options as given (the command's flags, named in the errors),
// before they are checked and turned into Options: what `analyze` and profile's analyze
// stage compute from a run and what they export.
type Settings struct {
	OutputDir, Plan, Tokenizer string
	UseServerTokenCount        bool
	// Goodput is --goodput, parsed when GoodputSet (it was given).
	Goodput    string
	GoodputSet bool
	// Gates are the --gate values; GatesFile is --gates (the agreed gates).
	Gates                         []string
	GatesFile                     string
	MaxErrorRate                  float64
	MaxScheduleLag, SliceDuration time.Duration
	// MaxWorkerCPUPct is --max-worker-cpu, in percent of one core (Options' is a fraction).
	MaxWorkerCPUPct                 float64
	Parallelism                     int
	Quiet, TraceTiming              bool
	ExportPrefix, ExportLevel       string
	ExportHTTPTrace, ExportPerChunk bool
	Exports                         []string
	NoHTML                          bool
	HTML                            string
	RequireTrustworthy              bool
	AcceptScheduleMiss              bool
	ValidateShape, GeneratorFile    string
	// Metrics and MetricsFile are the user metrics (--metric, --metrics-file); Where and
	// GroupBy select and group the requests (--where, --group-by).
	Metrics        []string
	MetricsFile    string
	Where, GroupBy string
	// ServerTraces is --server-traces: the traces file whose server spans are joined to the
	// requests ("": the run's server_traces.jsonl, when it has one).
	ServerTraces string
}

// Check checks every setting without reading a run: bounds, export names, the gates
// (metrics, statistics, values), the goodput SLOs, the gates file and the claim's files.
// profile calls it before anything is sent, so a typo never costs a run. Errors name the
// flag.
func (s *Settings) Check() error {
	_, err := s.Options(nil)
	return err
}

// CheckStreaming refuses the gates and goodput SLOs on metrics a run without streamed
// responses has no values for (time_to_first_token, inter_token_latency, ...), naming the
// flag: streaming is the plan's --streaming.
func (s *Settings) CheckStreaming(streaming bool) error {
	if streaming {
		return nil
	}
	o, err := s.Options(nil)
	if err != nil {
		return err
	}
	return CheckStreaming(o.Analysis.Goodput, o.Gates)
}

// Options checks s and converts it into Options for the run directories dirs. The
// command sets what depends on its process: the tokenizer loaders, Color, Stdout, Stderr.
func (s *Settings) Options(dirs []string) (Options, error) {
	switch s.ExportLevel {
	case LevelSummary, LevelRecords, LevelRaw:
	default:
		return Options{}, fmt.Errorf("--export-level %q: want summary, records or raw", s.ExportLevel)
	}
	if s.ExportPrefix == "" || strings.ContainsAny(s.ExportPrefix, "/\\") {
		return Options{}, fmt.Errorf("--profile-export-prefix %q: want a file name prefix without a path", s.ExportPrefix)
	}
	switch {
	case !(s.MaxErrorRate >= 0 && s.MaxErrorRate <= 1): // NaN too
		return Options{}, fmt.Errorf("--max-error-rate %v: want a fraction between 0 and 1", s.MaxErrorRate)
	case s.MaxScheduleLag <= 0:
		return Options{}, fmt.Errorf("--max-schedule-lag %v: must be positive", s.MaxScheduleLag)
	case !(s.MaxWorkerCPUPct > 0) || math.IsInf(s.MaxWorkerCPUPct, 0):
		return Options{}, fmt.Errorf("--max-worker-cpu %v: want a positive finite percentage of one core", s.MaxWorkerCPUPct)
	case s.Parallelism < 0:
		return Options{}, fmt.Errorf("--parallelism %d: must not be negative (0: all CPUs)", s.Parallelism)
	case s.NoHTML && s.HTML != "":
		return Options{}, fmt.Errorf("--html %s and --no-html contradict each other", s.HTML)
	}
	if err := CheckHTMLDir(s.HTML); err != nil {
		return Options{}, err
	}
	o := Options{RunDirs: dirs, OutputDir: s.OutputDir, ExportPrefix: s.ExportPrefix, Level: s.ExportLevel,
		MaxErrorRate: s.MaxErrorRate, Quiet: s.Quiet, TraceTiming: s.TraceTiming, NoHTML: s.NoHTML, HTML: s.HTML,
		Claim: Claim{RequireTrustworthy: s.RequireTrustworthy, AcceptScheduleMiss: s.AcceptScheduleMiss, GatesFile: s.GatesFile,
			ValidateShape: s.ValidateShape, GeneratorFile: s.GeneratorFile},
		Analysis: analyze.Options{PlanPath: s.Plan, UseServerTokenCount: s.UseServerTokenCount,
			TokenizerSpec: s.Tokenizer, SliceDuration: s.SliceDuration, MaxScheduleLag: s.MaxScheduleLag,
			MaxWorkerCPU: s.MaxWorkerCPUPct / 100, Parallelism: s.Parallelism,
			ExportHTTPTrace: s.ExportHTTPTrace, ExportPerChunkData: s.ExportPerChunk}}
	for _, e := range s.Exports {
		switch e {
		case FormatParquet:
			o.Parquet = true
		default:
			return Options{}, fmt.Errorf("--export %q: want parquet", e)
		}
	}
	reg, traces, err := UserMetrics(s.Metrics, s.MetricsFile) // checked before any log is read
	if err != nil {
		return Options{}, err
	}
	o.Analysis.Metrics, o.ServerTraces, o.ServerTracesFile = reg, traces, s.ServerTraces
	if o.Parquet {
		if err := columnar.Check(reg); err != nil {
			return Options{}, err
		}
	}
	if s.Where != "" {
		if o.Analysis.Where, err = metricexpr.Where(reg, s.Where); err != nil {
			return Options{}, err
		}
	}
	if s.GroupBy != "" {
		if o.Analysis.GroupBy, err = metricexpr.GroupBy(reg, s.GroupBy); err != nil {
			return Options{}, err
		}
	}
	if s.GoodputSet {
		if o.Analysis.Goodput, err = judge.ParseGoodputOf(reg, s.Goodput); err != nil {
			return Options{}, err
		}
	}
	for _, g := range s.Gates {
		gate, err := judge.ParseGateOf(reg, g)
		if err != nil {
			return Options{}, err
		}
		o.Gates = append(o.Gates, gate)
	}
	if err := s.agreedGates(reg, &o); err != nil {
		return Options{}, err
	}
	if s.ValidateShape != "" {
		if err := benchclaim.CheckReference(s.ValidateShape); err != nil {
			return Options{}, err
		}
	}
	if s.GeneratorFile != "" {
		if _, err := benchclaim.ReadGeneratorValidation(s.GeneratorFile); err != nil {
			return Options{}, fmt.Errorf("--generator-validation: %w", err)
		}
	}
	return o, nil
}

// agreedGates reads the gates file (--gates) into o.Claim.Agreed and adds its gates to
// o.Gates, each once.
func (s *Settings) agreedGates(reg *analyze.Registry, o *Options) error {
	if s.GatesFile == "" {
		return nil
	}
	b, err := os.ReadFile(s.GatesFile)
	if err != nil {
		return fmt.Errorf("--gates: %w", err)
	}
	f, err := judge.ParseGatesFileOf(reg, b, s.GatesFile)
	if err != nil {
		return err
	}
	o.Claim.Agreed = f
	for _, g := range f.Gates {
		if !hasGate(o.Gates, g.Parsed) {
			o.Gates = append(o.Gates, g.Parsed)
		}
	}
	return nil
}

// hasGate tells whether gates holds g (same metric, statistic, operator and value).
func hasGate(gates []judge.Gate, g judge.Gate) bool {
	for _, x := range gates {
		if x.Metric.Tag == g.Metric.Tag && x.Stat == g.Stat && x.Op == g.Op && x.Value == g.Value {
			return true
		}
	}
	return false
}

// UserMetrics returns a new registry with the server-trace metrics (analyze/servertime:
// user metrics, gates and selections may name them), then the user metrics compiled onto it
// (docs/metrics.md "User metrics": the --metrics-file's first, then each --metric), and the
// server metrics to bind to a run's spans.
func UserMetrics(metrics []string, file string) (*analyze.Registry, *servertime.Metrics, error) {
	reg := analyze.NewRegistry()
	traces, err := servertime.Register(reg)
	if err != nil || (len(metrics) == 0 && file == "") {
		return reg, traces, err
	}
	var specs []metricexpr.MetricSpec
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, fmt.Errorf("--metrics-file: %w", err)
		}
		fs, err := metricexpr.ParseMetricsFile(b, file)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, fs...)
	}
	for _, m := range metrics {
		s, err := metricexpr.ParseMetricFlag(m)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, s)
	}
	if err := metricexpr.Register(reg, specs); err != nil {
		return nil, nil, err
	}
	return reg, traces, nil
}
