package analyze

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
)

// The summary of one analysis: what every reporter reads (vegeta's Metrics). Analyze
// (read.go) reads the logs, summarise (summarise.go) merges them into it.

// Result is one metric's outcome: a distribution (Stats) for record metrics, else Value.
// Values are in the metric's display unit.
type Result struct {
	MetricDef
	Stats *Stats
	Value float64
	// Exact is Value as an integer, exactly, for whole-number single values (MetricDef.Int):
	// timestamps in nanoseconds do not fit a float64's 53 bits.
	Exact int64
	// Skipped counts, for a user metric, the requests its evaluator gave no value for.
	Skipped int64
}

// Counts tally the planned requests of the profile phase, plus warmup.
type Counts struct {
	// Planned is the number of records in the plan; Profile and Warmup split it by phase
	// (warmup records are not measured).
	Planned, Profile, Warmup int64
	// Valid requests count in the metrics; Errors did not (Lost, NotSent and Cancelled
	// included). GateErrors leaves out cancellations the plan asked for.
	Valid, Errors, GateErrors int64
	Sent, Lost, NotSent       int64
	// NotDue counts profile requests the plan's duration ended before they were due; they
	// are not part of the benchmark and are left out of Profile.
	NotDue int64
	// WarmupSeen counts warmup requests found in the logs; WarmupErrors those that failed
	// (not in Errors), so counts can be reconciled with the server's.
	WarmupSeen, WarmupErrors int64
}

// Verdict says whether the client kept its schedule, so the numbers describe the server.
type Verdict struct {
	// Known is false when nothing could be judged (no requests sent, no CPU samples).
	Known bool
	Kept  bool
	// DispatchLagP99Ms is the p99 of send − ready; MaxLagMs the bound.
	DispatchLagP99Ms float64
	MaxLagMs         float64
	LagKnown         bool
	// BusiestWorker is the worker with the highest CPU use over the profile window, as a
	// percentage of one core; MaxCPUPct the bound. When workers were pinned to one CPU
	// together (replay starts more workers than CPUs when one process cannot hold the
	// open files) and their sum is higher, BusiestWorkerPct is that CPU's load, the sum,
	// SharedBy how many workers shared it and BusiestWorker the busiest of them.
	BusiestWorker    int
	BusiestWorkerPct float64
	SharedBy         int
	MaxCPUPct        float64
	CPUKnown         bool
	// Reasons lists what failed.
	Reasons []string
	// What the lag is judged against (analyze/verdict.go, docs/metrics.md).
	VerdictContext
	// Server is what the server did to the connections: the verdict names it, never as the
	// client's (analyze/connections.go).
	Server ServerConnections
}

// WorkerSummary is one worker's health over the profile window.
type WorkerSummary struct {
	Run, Worker int
	// CPU is the CPU the worker was pinned to (run.json workers[].cpu), -1 when unpinned.
	CPU      int
	Requests int64
	// CPUPct is the worker's CPU time (user+sys) over wall time in the profile window, as a
	// percentage of one core; -1 without samples.
	CPUPct float64
	Status string
	Torn   int64
}

// Slice is the summary of the requests sent in one time window.
type Slice struct {
	Index       int
	StartUnixNs int64
	EndUnixNs   int64
	Results     []Result
	ErrorCounts []ErrorCount
	// ServerMetrics are the server and GPU metrics over the slice (analyze/servermetrics.go).
	ServerMetrics []ServerMetric
}

// Summary is everything one analysis computed. Reporters are functions over it.
type Summary struct {
	Tool, ToolVersion  string
	PlanHash, PlanPath string
	RunDirs            []string
	Endpoint, Model    string
	Streaming          bool
	Concurrency        int
	OfferedRate        float64
	Seed               uint64
	Tokenizer          string
	// TokenCount is "tokenizer" or "server" (--use-server-token-count).
	TokenCount  string
	URLs        []string
	CommandLine string
	Spec        map[string]any
	// StartUnixNs and EndUnixNs bound the benchmark: first send to last response.
	StartUnixNs, EndUnixNs int64
	// RunStartUnixNs is the first run's wall-clock zero; RunStatus its run.json status.
	RunStartUnixNs int64
	RunStatus      string
	WasCancelled   bool

	// Registry holds the metrics the analysis computed (Options.Metrics); reporters look the
	// results' definitions up in it. Nil (a Summary built by hand) is the built-in metrics.
	Registry *Registry

	Results []Result
	Errors  []ErrorCount
	Counts  Counts
	Verdict Verdict
	Goodput []SLO
	Slices  []Slice
	// SliceDurationNs is the slice width when slices were requested.
	SliceDurationNs int64
	// Selection says how the requests were selected and grouped (Options.Where and
	// GroupBy), nil when they were not; Groups are the groups' summaries (GroupBy), in key
	// order.
	Selection *SelectionReport
	// Usage counts the valid profile responses whose server token counts were impossible
	// (usage.go).
	Usage   UsageCheck
	Groups  []Group
	GPUs    []GPUSummary
	Workers []WorkerSummary
	// Notes are warnings for people: torn logs, zero-gap chunks, OSL mismatches.
	Notes []string
	// Damaged lists the logs that could not be read whole (an unreadable header, a corrupt
	// record before the end): the results leave out what they held. Notes say more.
	Damaged []string
	// Claim is the benchmark claim (benchclaim.go), set by analyze/benchclaim.Evaluate; nil before.
	Claim *Claim
	// Shards describes the shards of a distributed run (analyze/shards.go); nil otherwise.
	Shards *ShardReport
	// ServerSeries are the scraped server and GPU metrics (analyze/servermetrics.go) mapped to
	// stable names, on the benchmark's clock; ServerMetrics their statistics over the
	// profile window. Both empty when the run has no server-metrics file.
	ServerSeries  []ServerMetricSeries
	ServerMetrics []ServerMetric
	// Sessions are the session metrics of a graph plan (agentic workloads; sessions.go), nil
	// for other plans.
	Sessions *SessionSummary
	// ServerTraces counts the server spans joined to the requests (joined.go), nil when the
	// run carried no trace context and no traces file was given.
	ServerTraces *TraceJoin

	runStarts     []int64       // every run's wall-clock zero after the first
	runStatus     []string      // each run's run.json status, by run (Health)
	hosts         []string      // each run's host, by run
	planPathShown string        // the plan path as run.json (or --plan) gave it
	shape         *shapeSamples // the requests shape validation compares (shape.go)
}

// Result returns the result with the given tag.
func (s *Summary) Result(tag string) (*Result, bool) {
	for i := range s.Results {
		if s.Results[i].Tag == tag {
			return &s.Results[i], true
		}
	}
	return nil, false
}

// ResultOf returns the result of metric id, nil when the run has none.
func (s *Summary) ResultOf(id MetricID) *Result {
	for i := range s.Results {
		if s.Results[i].ID == id {
			return &s.Results[i]
		}
	}
	return nil
}

// BenchmarkID identifies the analysed runs: a hash of the plan and each run's start, so
// analysing the same runs twice gives the same id.
func (s *Summary) BenchmarkID() string {
	return BenchmarkIDOf(s.PlanHash, append([]int64{s.RunStartUnixNs}, s.runStarts...)...)
}

// BenchmarkIDOf is the benchmark id of the runs of plan planHash that started at starts
// (run.json start_unix_ns, the first run's first), as Summary.BenchmarkID gives it once they
// are analysed: the live export names a run by it before any analysis.
func BenchmarkIDOf(planHash string, starts ...int64) string {
	h := sha256.New()
	io.WriteString(h, planHash)
	for _, d := range starts {
		io.WriteString(h, "\n"+strconv.FormatInt(d, 10))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// GPUEndpoint names run r's telemetry source, unique among the runs analysed together.
func (s *Summary) GPUEndpoint(r int) string {
	name := "nvml://" + s.hosts[r]
	for i := 0; i < r; i++ {
		if s.hosts[i] == s.hosts[r] {
			return name + "/run" + strconv.Itoa(r)
		}
	}
	return name
}

// Host is the host run number run (in the order of Options.RunDirs) ran on.
func (s *Summary) Host(run int) string { return s.hosts[run] }

// PlanPathGiven is the plan's path as run.json (or --plan) gave it; PlanPath is where it was read.
func (s *Summary) PlanPathGiven() string { return s.planPathShown }

// RunStatuses are the runs' run.json statuses: the first run's as RunStatus says it, then
// the other shards' (judge.Health names each one that did not complete).
func (s *Summary) RunStatuses() []string {
	statuses := []string{s.RunStatus}
	if len(s.runStatus) > 1 {
		statuses = append(statuses, s.runStatus[1:]...)
	}
	return statuses
}
