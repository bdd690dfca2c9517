package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
)

// GeneratorValidationVersion is the format version of the generator validation file
// (docs/run-format.md "Generator validation"); readers refuse other versions.
const GeneratorValidationVersion = 1

// GeneratorValidationName is the validation file's name in a run directory.
const GeneratorValidationName = "generator_validation.json"

// Machine identifies where a run or a validation ran.
type Machine struct {
	Host     string `json:"host"`
	CPUModel string `json:"cpu_model,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
}

// Tolerances bound the generator validation's errors (measured − configured, absolute, ms)
// and the client's own figures. The defaults are DefaultTolerances (docs/metrics.md).
type Tolerances struct {
	TTFTP50Ms        float64 `json:"ttft_p50_ms"`
	TTFTP99Ms        float64 `json:"ttft_p99_ms"`
	ITLP50Ms         float64 `json:"itl_p50_ms"`
	ITLP99Ms         float64 `json:"itl_p99_ms"`
	ChunkGapP50Ms    float64 `json:"inter_chunk_p50_ms"`
	ChunkGapP99Ms    float64 `json:"inter_chunk_p99_ms"`
	ScheduleLagP99Ms float64 `json:"schedule_lag_p99_ms"`
	WorkerCPUPct     float64 `json:"worker_cpu_pct"`
}

// DefaultTolerances are the documented bounds of a passing generator validation: the client
// adds at most 2 ms to TTFT at the median (10 ms at p99), 1 ms to a token gap (5 ms at p99),
// dispatches within 1 ms at p99 and keeps every worker under 90% of a core.
func DefaultTolerances() Tolerances {
	return Tolerances{TTFTP50Ms: 2, TTFTP99Ms: 10, ITLP50Ms: 1, ITLP99Ms: 5, ChunkGapP50Ms: 1, ChunkGapP99Ms: 5,
		ScheduleLagP99Ms: 1, WorkerCPUPct: 90}
}

// MockTiming is the known timing the mock server was given.
type MockTiming struct {
	TTFTMs float64 `json:"ttft_ms"`
	ITLMs  float64 `json:"itl_ms"`
}

// ValidationBound is the bounded share of the plan the validation replayed.
type ValidationBound struct {
	// Requests is the most profile requests replayed; DurationS the most seconds.
	Requests  int     `json:"requests"`
	DurationS float64 `json:"duration_s"`
}

// GeneratorValidation is the outcome of replaying a plan against the in-process mock server
// with known timing (profile --validate-generator, replay --validate), kept in the run
// directory as generator_validation.json and reusable by later runs of the same plan on the
// same machine with the same workers (--generator-validation FILE).
type GeneratorValidation struct {
	FormatVersion int    `json:"format_version"`
	Tool          string `json:"tool"`
	ToolVersion   string `json:"tool_version"`
	CreatedUnixNs int64  `json:"created_unix_ns"`
	// PlanHash is the validated plan's identity (the whole plan's, not the replayed share's).
	PlanHash string  `json:"plan_hash"`
	Machine  Machine `json:"machine"`
	// Workers is the worker count and WorkerCPUs their CPUs (-1: unpinned).
	Workers    int   `json:"workers"`
	WorkerCPUs []int `json:"worker_cpus"`
	// ServerCPUs are the CPUs the mock server (and the coordinator) ran on; SharedCPUs is
	// true when none was free of workers, so the figures measure client and server together.
	ServerCPUs []int           `json:"server_cpus"`
	SharedCPUs bool            `json:"shared_cpus"`
	Mock       MockTiming      `json:"mock"`
	Bound      ValidationBound `json:"bound"`
	Tolerances Tolerances      `json:"tolerances"`
	// Figures are the measured errors and the client's figures (GeneratorFigures).
	Figures map[string]float64 `json:"figures"`
	Passed  bool               `json:"passed"`
	// Reasons say what exceeded its tolerance; Notes say more (shared CPUs, a bound hit).
	Reasons []string `json:"reasons"`
	Notes   []string `json:"notes,omitempty"`
}

// Generator validation figures, by name (ms unless named otherwise).
const (
	FigTTFTP50Error = "ttft_p50_error_ms"
	FigTTFTP99Error = "ttft_p99_error_ms"
	FigITLP50Error  = "itl_p50_error_ms"
	FigITLP99Error  = "itl_p99_error_ms"
	FigICLP50Error  = "inter_chunk_p50_error_ms"
	FigICLP99Error  = "inter_chunk_p99_error_ms"
	FigScheduleLag  = "schedule_lag_p99_ms"
	FigWorkerCPU    = "client_cpu_max_pct"
	FigRequests     = "requests"
	FigFailed       = "failed_requests"
	// FigMockLateP50 and FigMockLateP99 are the mock server's own lateness (its events' write
	// instants after their due instants): reported, not judged; they tell a starved server
	// from a starved client.
	FigMockLateP50 = "mock_lateness_p50_ms"
	FigMockLateP99 = "mock_lateness_p99_ms"
)

// JudgeGenerator computes the validation's figures from the analysis of the run against the
// mock server (s) and judges them against tol: each error is measured − configured at p50
// and p99 for TTFT, ITL and the inter-chunk gaps; then the p99 schedule (dispatch) lag and the
// busiest worker's CPU. A failed request, or no measured request at all, fails it.
func JudgeGenerator(s *Summary, mock MockTiming, tol Tolerances) (figures map[string]float64, passed bool, reasons []string) {
	figures = map[string]float64{}
	failed := s.Counts.Errors - s.Counts.NotSent
	figures[FigRequests] = float64(s.Counts.Valid)
	figures[FigFailed] = float64(failed)
	if s.Counts.Valid == 0 {
		return figures, false, []string{"no request completed against the mock server"}
	}
	if failed > 0 {
		reasons = append(reasons, fmt.Sprintf("%d requests failed against the mock server, which never fails", failed))
	}
	check := func(id MetricID, configured float64, name50, name99 string, tol50, tol99 float64, what string) {
		r := s.result(id)
		if r == nil || r.Stats == nil {
			return
		}
		e50, e99 := r.Stats.P[4]-configured, r.Stats.P[8]-configured
		figures[name50], figures[name99] = round4(e50), round4(e99)
		if math.Abs(e50) > tol50 {
			reasons = append(reasons, fmt.Sprintf("%s p50 error %s ms exceeds ±%s ms", what, fmtNum(e50), fmtNum(tol50)))
		}
		if math.Abs(e99) > tol99 {
			reasons = append(reasons, fmt.Sprintf("%s p99 error %s ms exceeds ±%s ms", what, fmtNum(e99), fmtNum(tol99)))
		}
	}
	check(MTimeToFirstToken, mock.TTFTMs, FigTTFTP50Error, FigTTFTP99Error, tol.TTFTP50Ms, tol.TTFTP99Ms, "TTFT")
	check(MInterTokenLatency, mock.ITLMs, FigITLP50Error, FigITLP99Error, tol.ITLP50Ms, tol.ITLP99Ms, "ITL")
	check(MInterChunkLatency, mock.ITLMs, FigICLP50Error, FigICLP99Error, tol.ChunkGapP50Ms, tol.ChunkGapP99Ms, "inter-chunk gap")
	if r := s.result(MDispatchLag); r != nil && r.Stats != nil {
		figures[FigScheduleLag] = round4(r.Stats.P[8])
		if r.Stats.P[8] > tol.ScheduleLagP99Ms {
			reasons = append(reasons, fmt.Sprintf("schedule lag p99 %s ms exceeds %s ms", fmtNum(r.Stats.P[8]), fmtNum(tol.ScheduleLagP99Ms)))
		}
	}
	busiest, known := 0.0, false
	for _, w := range s.Workers {
		if w.CPUPct >= 0 {
			busiest, known = math.Max(busiest, w.CPUPct), true
		}
	}
	if known {
		figures[FigWorkerCPU] = round4(busiest)
		if busiest >= tol.WorkerCPUPct {
			reasons = append(reasons, fmt.Sprintf("a worker used %s%% of a core (bound %s%%)", fmtNum(busiest), fmtNum(tol.WorkerCPUPct)))
		}
	}
	return figures, len(reasons) == 0, reasons
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// WriteGeneratorValidation writes v to path as indented JSON.
func WriteGeneratorValidation(path string, v *GeneratorValidation) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("analyze: generator validation: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("analyze: generator validation: %w", err)
	}
	return nil
}

// ReadGeneratorValidation reads and checks a generator validation file. Errors name the file.
func ReadGeneratorValidation(path string) (*GeneratorValidation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("generator validation: %w", err)
	}
	return ParseGeneratorValidation(b, path)
}

// ParseGeneratorValidation decodes a generator validation document; name is used in errors.
func ParseGeneratorValidation(b []byte, name string) (*GeneratorValidation, error) {
	var v GeneratorValidation
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("generator validation %s: %w", name, err)
	}
	switch {
	case v.FormatVersion == 0:
		return nil, fmt.Errorf("generator validation %s: no format_version: not a generator validation file", name)
	case v.FormatVersion != GeneratorValidationVersion:
		return nil, fmt.Errorf("generator validation %s: format version %d is not supported (this build reads version %d)", name, v.FormatVersion, GeneratorValidationVersion)
	case v.PlanHash == "":
		return nil, fmt.Errorf("generator validation %s: no plan_hash", name)
	}
	return &v, nil
}

// RunIdentity is what a generator validation must match to stand for a run: the plan, the
// machine and the workers.
type RunIdentity struct {
	PlanHash   string
	Machine    Machine
	WorkerCPUs []int
}

// RunIdentityOf reads the identity of the run in dir from its run.json.
func RunIdentityOf(dir string) (RunIdentity, error) {
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		return RunIdentity{}, err
	}
	id := RunIdentity{PlanHash: m.PlanHash, Machine: Machine{Host: m.Host, CPUModel: m.CPUModel, Kernel: m.Kernel}}
	for _, w := range m.Workers {
		id.WorkerCPUs = append(id.WorkerCPUs, w.CPU)
	}
	return id, nil
}

// Mismatch says why v does not stand for the run id, or "" when it does: the same plan
// hash, host, CPU model and worker CPUs.
func (v *GeneratorValidation) Mismatch(id RunIdentity) string {
	switch {
	case v.PlanHash != id.PlanHash:
		got, want := rawlog.HashPrefixes(v.PlanHash, id.PlanHash)
		return fmt.Sprintf("it validated plan %s, not this run's %s", got, want)
	case v.Machine.Host != id.Machine.Host || v.Machine.CPUModel != id.Machine.CPUModel:
		return fmt.Sprintf("it was made on %s (%s), not on this run's %s (%s)", v.Machine.Host, v.Machine.CPUModel, id.Machine.Host, id.Machine.CPUModel)
	case v.Workers != len(id.WorkerCPUs) || !slices.Equal(v.WorkerCPUs, id.WorkerCPUs):
		return fmt.Sprintf("it ran %d workers on CPUs %v, this run %d on %v", v.Workers, v.WorkerCPUs, len(id.WorkerCPUs), id.WorkerCPUs)
	}
	return ""
}
