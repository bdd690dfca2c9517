package benchclaim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/analyze"
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

// Tolerances bound the generator validation's errors (absolute, ms): measured − configured,
// or the client's own share of it when the mock server's log matched the run (the TTFT
// bounds then apply to the client's share of TTFT, the inter-chunk bounds to its receive
// delay), and the client's own figures. The defaults are DefaultTolerances (docs/metrics.md).
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

// Figures of the client's own share (ClientShare), judged when the mock server's log
// matched the run.
const (
	FigClientTTFTP50    = "client_ttft_share_p50_ms"
	FigClientTTFTP99    = "client_ttft_share_p99_ms"
	FigReceiveP50       = "receive_delay_p50_ms"
	FigReceiveP99       = "receive_delay_p99_ms"
	FigMatched          = "matched_requests"
	FigMockTTFTP50Error = "mock_ttft_p50_error_ms"
	FigMockTTFTP99Error = "mock_ttft_p99_error_ms"
	FigMockReadP50      = "mock_read_delay_p50_ms"
	FigMockReadP99      = "mock_read_delay_p99_ms"
)

// JudgeGenerator computes the validation's figures from the analysis of the run against the
// mock server (s) and judges them against tol.
//
// Measured − configured is computed at p50 and p99 for TTFT, ITL and the inter-chunk gaps.
// With share (the client's log matched with the mock server's, ClientShareOf), the client's
// own share is judged instead: its share of TTFT against the TTFT tolerances and the receive
// delay of later events against the inter-chunk ones; a measured − configured error beyond
// its tolerance is then the mock server's lateness and becomes a note, not a failure. Without
// a usable share, measured − configured is judged. Always judged: the p99 schedule (dispatch)
// lag, the busiest worker's CPU and failed requests (the mock never fails one); no measured
// request at all fails it.
func JudgeGenerator(s *analyze.Summary, mock MockTiming, tol Tolerances, share *ClientShare) (figures map[string]float64, passed bool, reasons, notes []string) {
	figures = map[string]float64{}
	failed := s.Counts.Errors - s.Counts.NotSent
	figures[FigRequests] = float64(s.Counts.Valid)
	figures[FigFailed] = float64(failed)
	if s.Counts.Valid == 0 {
		return figures, false, []string{"no request completed against the mock server"}, nil
	}
	if failed > 0 {
		reasons = append(reasons, fmt.Sprintf("%d requests failed against the mock server, which never fails", failed))
	}
	judge := func(list *[]string, e50, e99, tol50, tol99 float64, what string) {
		if math.Abs(e50) > tol50 {
			*list = append(*list, fmt.Sprintf("%s %s ms exceeds ±%s ms", fmt.Sprintf(what, "p50"), analyze.FormatNumber(e50), analyze.FormatNumber(tol50)))
		}
		if math.Abs(e99) > tol99 {
			*list = append(*list, fmt.Sprintf("%s %s ms exceeds ±%s ms", fmt.Sprintf(what, "p99"), analyze.FormatNumber(e99), analyze.FormatNumber(tol99)))
		}
	}
	var overall []string // measured − configured beyond tolerance
	check := func(id analyze.MetricID, configured float64, name50, name99 string, tol50, tol99 float64, what string) {
		r := s.ResultOf(id)
		if r == nil || r.Stats == nil {
			return
		}
		e50, e99 := r.Stats.P[4]-configured, r.Stats.P[8]-configured
		figures[name50], figures[name99] = round4(e50), round4(e99)
		judge(&overall, e50, e99, tol50, tol99, what+" %s error")
	}
	check(analyze.MTimeToFirstToken, mock.TTFTMs, FigTTFTP50Error, FigTTFTP99Error, tol.TTFTP50Ms, tol.TTFTP99Ms, "TTFT")
	check(analyze.MInterTokenLatency, mock.ITLMs, FigITLP50Error, FigITLP99Error, tol.ITLP50Ms, tol.ITLP99Ms, "ITL")
	check(analyze.MInterChunkLatency, mock.ITLMs, FigICLP50Error, FigICLP99Error, tol.ChunkGapP50Ms, tol.ChunkGapP99Ms, "inter-chunk gap")

	ok, why := share.usable(s.Counts.Valid)
	if ok {
		figures[FigMatched] = float64(share.Matched)
		t50, t99 := sortedPercentiles(share.TTFT)
		figures[FigClientTTFTP50], figures[FigClientTTFTP99] = round4(t50), round4(t99)
		judge(&reasons, t50, t99, tol.TTFTP50Ms, tol.TTFTP99Ms, "the client's share of TTFT %s")
		if len(share.Receive) > 0 {
			r50, r99 := sortedPercentiles(share.Receive)
			figures[FigReceiveP50], figures[FigReceiveP99] = round4(r50), round4(r99)
			judge(&reasons, r50, r99, tol.ChunkGapP50Ms, tol.ChunkGapP99Ms, "receive delay %s")
		}
		m50, m99 := sortedPercentiles(share.ServerTTFT)
		figures[FigMockTTFTP50Error], figures[FigMockTTFTP99Error] = round4(m50-mock.TTFTMs), round4(m99-mock.TTFTMs)
		d50, d99 := sortedPercentiles(share.ReadDelay)
		figures[FigMockReadP50], figures[FigMockReadP99] = round4(d50), round4(d99)
		if len(overall) > 0 {
			notes = append(notes, fmt.Sprintf("measured − configured: %s; the client's own share stayed within tolerance (TTFT p99 %s ms), so the rest is the mock server's: it read requests p99 %s ms after the client wrote them and wrote their first event p99 %s ms after that (%s ms configured)",
				strings.Join(overall, "; "), analyze.FormatNumber(t99), analyze.FormatNumber(d99), analyze.FormatNumber(m99), analyze.FormatNumber(mock.TTFTMs)))
		}
	} else {
		reasons = append(reasons, overall...)
		if share != nil || len(overall) > 0 {
			notes = append(notes, "judged on measured − configured alone: "+why)
		}
	}
	if r := s.ResultOf(analyze.MDispatchLag); r != nil && r.Stats != nil {
		figures[FigScheduleLag] = round4(r.Stats.P[8])
		if r.Stats.P[8] > tol.ScheduleLagP99Ms {
			reasons = append(reasons, fmt.Sprintf("schedule lag p99 %s ms exceeds %s ms", analyze.FormatNumber(r.Stats.P[8]), analyze.FormatNumber(tol.ScheduleLagP99Ms)))
		}
	}
	if _, busiest, sharedBy, known := analyze.BusiestCPU(s.Workers); known {
		figures[FigWorkerCPU] = round4(busiest)
		if busiest >= tol.WorkerCPUPct {
			who := "a worker"
			if sharedBy > 1 {
				who = fmt.Sprintf("%d workers sharing a CPU", sharedBy)
			}
			reasons = append(reasons, fmt.Sprintf("%s used %s%% of a core (bound %s%%)", who, analyze.FormatNumber(busiest), analyze.FormatNumber(tol.WorkerCPUPct)))
		}
	}
	return figures, len(reasons) == 0, reasons, notes
}

// round4 rounds to 4 decimals, without a negative zero.
func round4(v float64) float64 { return math.Round(v*1e4)/1e4 + 0 }

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
