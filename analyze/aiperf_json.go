package analyze

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SchemaVersion is the profile_export_aiperf.json schema version this package writes
// (AIPerf's JsonExportData.SCHEMA_VERSION).
const SchemaVersion = "1.3"

// aiperfDeclared is the order of the metric fields AIPerf's JsonExportData declares; its
// exporter writes them first, then its fixed blocks, then every other metric.
var aiperfDeclared = [...]MetricID{
	MRequestThroughput, MRequestLatency, MRequestCount, MTimeToFirstToken, MTimeToSecondToken,
	MInterTokenLatency, MOutputTokenThroughput, MOutputTokenThroughputPerUser,
	MOutputSequenceLength, MInputSequenceLength, MGoodput, MGoodRequestCount, MOutputTokenCount,
	MReasoningTokenCount, MMinRequestTimestamp, MMaxResponseTimestamp, MInterChunkLatency,
	MTotalOutputTokens, MTotalReasoningTokens, MBenchmarkDuration, MTotalISL, MTotalOSL,
	MErrorRequestCount, MErrorISL, MTotalErrorISL,
}

// metricBlock is one metric's stats block, exactly AIPerf's JsonMetricResult (which forbids
// other keys): unit and avg, and for distributions the percentiles p1…p99, min, max, std,
// count and sum, in its field order. What that model has no field for (p99_9, approx) is
// in extraStats.
func metricBlock(r *Result) *ordered {
	o := &ordered{}
	o.add("unit", r.Unit)
	if r.Stats == nil {
		o.add("avg", pyFloat(r.Value))
		return o
	}
	st := r.Stats
	o.add("avg", pyFloat(st.Avg))
	for i, name := range PercentileNames[:9] {
		o.add(name, pyFloat(st.P[i]))
	}
	o.add("min", pyFloat(st.Min))
	o.add("max", pyFloat(st.Max))
	o.add("std", pyFloat(st.Std))
	o.add("count", st.Count)
	o.add("sum", pyFloat(st.Sum))
	return o
}

// extraStats holds, per distribution, the statistics AIPerf's metric block has no field for:
// p99_9, approx when the percentiles come from a histogram, and for a user metric the
// requests it skipped (no value). It is written under
// llmbench.extra_stats, so that every metric block stays a valid JsonMetricResult.
func extraStats(results []Result) *ordered {
	o := &ordered{}
	for i := range results {
		r := &results[i]
		if r.Stats == nil {
			continue
		}
		e := (&ordered{}).add("p99_9", pyFloat(r.Stats.P[9]))
		if r.Stats.Approx {
			e.add("approx", true)
		}
		if r.User {
			e.add("skipped", r.Skipped) // the requests a user metric had no value for
		}
		o.add(r.Tag, e)
	}
	return o
}

// isoTime formats Unix nanoseconds like Python's datetime.isoformat, in UTC.
func isoTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000")
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

// inputConfig is the resolved configuration, shaped like AIPerf's input_config where the
// concepts match, plus the plan.
func inputConfig(s *Summary) *ordered {
	ep := &ordered{}
	ep.add("model_names", strings.Split(s.Model, ",")) // a plan may name a list: --model a,b
	ep.add("type", s.Endpoint)
	ep.add("streaming", s.Streaming)
	if len(s.URLs) > 0 {
		ep.add("url", s.URLs[0])
		ep.add("urls", s.URLs)
	}
	input := &ordered{}
	input.add("random_seed", s.Seed)
	if s.Tokenizer != "" {
		input.add("tokenizer", (&ordered{}).add("name", s.Tokenizer))
	}
	loadgen := &ordered{}
	if s.Concurrency > 0 {
		loadgen.add("concurrency", s.Concurrency)
	}
	if s.OfferedRate > 0 {
		loadgen.add("request_rate", pyFloat(s.OfferedRate))
	}
	loadgen.add("request_count", s.Counts.Profile)
	loadgen.add("warmup_request_count", s.Counts.Warmup)
	o := &ordered{}
	o.add("endpoint", ep)
	o.add("input", input)
	o.add("loadgen", loadgen)
	if s.CommandLine != "" {
		o.add("cli_command", s.CommandLine)
	}
	plan := &ordered{}
	plan.add("path", s.planPathShown)
	plan.add("hash", s.PlanHash)
	if s.Spec != nil {
		plan.add("spec", s.Spec)
	}
	o.add("plan", plan)
	return o
}

// WriteAIPerfJSON writes profile_export_aiperf.json in AIPerf's schema: one stats block per
// metric tag (display units), schema_version, benchmark_id, input_config, run_info,
// was_cancelled, error_summary, start_time/end_time, telemetry_data when GPU samples exist,
// and this tool's own block under "llmbench".
func WriteAIPerfJSON(w io.Writer, s *Summary) error {
	o := &ordered{}
	id := s.BenchmarkID()
	o.add("schema_version", SchemaVersion)
	o.add("benchmark_id", id)
	done := map[MetricID]bool{}
	for _, mid := range aiperfDeclared {
		if r := s.result(mid); r != nil {
			o.add(r.Tag, metricBlock(r))
			done[mid] = true
		}
	}
	if t := telemetryData(s); t != nil {
		o.add("telemetry_data", t)
	}
	o.add("input_config", inputConfig(s))
	runInfo := &ordered{}
	runInfo.add("benchmark_id", id)
	runInfo.add("random_seed", s.Seed)
	runInfo.add("trial", 0)
	runInfo.add("run_label", "run_0001")
	runInfo.add("variation_label", "base")
	runInfo.add("variation_index", 0)
	runInfo.add("variation_values", &ordered{})
	if s.CommandLine != "" {
		runInfo.add("cli_command", s.CommandLine)
	}
	o.add("run_info", runInfo)
	o.add("was_cancelled", s.WasCancelled)
	o.add("error_summary", errorSummaryJSON(s.Errors))
	if s.Sessions != nil {
		o.add("branch_stats", branchStatsJSON(s.Sessions.Branch)) // AIPerf's, of DAG runs
	}
	o.add("start_time", isoTime(s.StartUnixNs))
	o.add("end_time", isoTime(s.EndUnixNs))
	for i := range s.Results {
		r := &s.Results[i]
		if !done[r.ID] {
			o.add(r.Tag, metricBlock(r))
		}
	}
	o.add("llmbench", ownBlock(s))
	b, err := marshalIndent(o)
	if err != nil {
		return fmt.Errorf("analyze: profile export: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// ownBlock holds what AIPerf's schema has no place for: the run's accounting, the verdict,
// worker health, notes and the statistics metric blocks cannot carry (extra_stats).
func ownBlock(s *Summary) *ordered {
	c := s.Counts
	counts := &ordered{}
	counts.add("planned", c.Planned).add("profile", c.Profile).add("warmup", c.Warmup).
		add("warmup_seen", c.WarmupSeen).add("warmup_errors", c.WarmupErrors).add("sent", c.Sent).add("valid", c.Valid).
		add("errors", c.Errors).add("gate_errors", c.GateErrors).add("lost", c.Lost).add("not_sent", c.NotSent).
		add("not_due", c.NotDue)
	v := s.Verdict
	verdict := &ordered{}
	verdict.add("known", v.Known).add("schedule_kept", v.Kept)
	if v.LagKnown {
		verdict.add("dispatch_lag_p99_ms", pyFloat(v.DispatchLagP99Ms))
	}
	verdict.add("max_schedule_lag_ms", pyFloat(v.MaxLagMs))
	if v.CPUKnown {
		verdict.add("busiest_worker", v.BusiestWorker).add("busiest_worker_cpu_pct", pyFloat(v.BusiestWorkerPct))
		if v.SharedBy > 1 {
			verdict.add("busiest_cpu_shared_by", v.SharedBy)
		}
	}
	verdict.add("max_worker_cpu_pct", pyFloat(v.MaxCPUPct))
	if v.Jitter {
		verdict.add("arrivals_jittered", true)
	}
	if v.FloorKnown {
		verdict.add("machine_floor_timer_lag_p50_ms", pyFloat(v.FloorTimerLagP50Ms)).add("machine_floor_timer_lag_p99_ms", pyFloat(v.FloorTimerLagP99Ms)).
			add("machine_floor_loopback_rtt_us", pyFloat(v.FloorLoopbackRTTUs)).add("machine_floor_syscall_us", pyFloat(v.FloorSyscallUs))
	}
	reasons := make([]any, 0, len(v.Reasons))
	for _, r := range v.Reasons {
		reasons = append(reasons, r)
	}
	verdict.add("reasons", reasons)
	if sc := v.Server; sc.ServerClosed > 0 || sc.Reconnects > 0 {
		verdict.add("server_closed_requests", sc.ServerClosed).add("server_reconnects", sc.Reconnects).
			add("server_closes_after_each_response", sc.AfterEachResponse)
	}
	workers := make([]any, 0, len(s.Workers))
	for _, w := range s.Workers {
		wo := &ordered{}
		wo.add("run", w.Run).add("worker", w.Worker).add("requests", w.Requests)
		if w.CPUPct >= 0 {
			wo.add("cpu_pct", pyFloat(w.CPUPct))
		}
		wo.add("status", w.Status)
		if w.Torn > 0 {
			wo.add("torn_bytes", w.Torn)
		}
		workers = append(workers, wo)
	}
	slos := make([]any, 0, len(s.Goodput))
	for _, g := range s.Goodput {
		slos = append(slos, g.String())
	}
	notes := make([]any, 0, len(s.Notes))
	for _, n := range s.Notes {
		notes = append(notes, n)
	}
	o := &ordered{}
	o.add("tool", s.Tool).add("tool_version", s.ToolVersion).add("plan_hash", s.PlanHash)
	o.add("token_count", s.TokenCount).add("tokenizer", s.Tokenizer)
	o.add("run_status", s.RunStatus)
	o.add("counts", counts).add("verdict", verdict).add("goodput_slos", slos)
	o.add("workers", workers).add("notes", notes)
	if s.Claim != nil {
		o.add("benchmark_claim", claimBlock(s.Claim))
	}
	if sm := serverMetricsJSON(s); sm != nil {
		o.add("server_metrics", sm)
	}
	if s.Sessions != nil {
		o.add("sessions", sessionsJSON(s.Sessions))
	}
	if u := userMetricsJSON(s.Registry); len(u) > 0 {
		o.add("user_metrics", u) // the definitions of the user metrics (groups_export.go)
	}
	if s.Selection != nil {
		o.add("selection", selectionJSON(s.Selection))
		if s.Selection.GroupBy != "" {
			o.add("groups", groupsJSON(s.Groups))
		}
	}
	o.add("extra_stats", extraStats(s.Results))
	return o
}

// telemetryData is AIPerf's telemetry_data block: per GPU summaries keyed by endpoint.
func telemetryData(s *Summary) *ordered {
	if len(s.GPUs) == 0 {
		return nil
	}
	endpoints := &ordered{}
	var names []string
	byRun := map[int]*ordered{}
	for _, g := range s.GPUs {
		gpus := byRun[g.Run]
		if gpus == nil {
			gpus = &ordered{}
			byRun[g.Run] = gpus
			name := s.gpuEndpoint(g.Run)
			names = append(names, name)
			endpoints.add(name, (&ordered{}).add("gpus", gpus))
		}
		metrics := &ordered{}
		for _, m := range gpuMetricDefs {
			st := m.get(&g)
			if st == nil {
				continue
			}
			metrics.add(m.key, metricBlock(&Result{MetricDef: MetricDef{Unit: m.unit, Alias: -1}, Stats: st}))
		}
		if g.HasEnergy {
			metrics.add("energy_consumption", (&ordered{}).add("unit", "MJ").add("avg", pyFloat(g.EnergyJ/1e6)))
		}
		gs := &ordered{}
		gs.add("gpu_index", g.GPU).add("gpu_name", g.Name).add("gpu_uuid", g.UUID).add("hostname", s.hosts[g.Run])
		gs.add("metrics", metrics)
		gpus.add("gpu_"+strconv.Itoa(g.GPU), gs)
	}
	sum := &ordered{}
	sum.add("endpoints_configured", names).add("endpoints_successful", names)
	sum.add("start_time", isoTime(s.StartUnixNs)).add("end_time", isoTime(s.EndUnixNs))
	return (&ordered{}).add("summary", sum).add("endpoints", endpoints)
}

// gpuEndpoint names run r's telemetry source, unique among the runs analysed together.
func (s *Summary) gpuEndpoint(r int) string {
	name := "nvml://" + s.hosts[r]
	for i := 0; i < r; i++ {
		if s.hosts[i] == s.hosts[r] {
			return name + "/run" + strconv.Itoa(r)
		}
	}
	return name
}

// gpuMetricDefs maps the GPU fields to AIPerf's telemetry metric keys and display names.
var gpuMetricDefs = []struct {
	key, display, unit string
	get                func(*GPUSummary) *Stats
}{
	{"gpu_power_usage", "GPU Power Usage", "W", func(g *GPUSummary) *Stats { return g.Power }},
	{"gpu_utilization", "GPU Utilization", "%", func(g *GPUSummary) *Stats { return g.Util }},
	{"memory_copy_utilization", "Memory Copy Utilization", "%", func(g *GPUSummary) *Stats { return g.MemUtil }},
	{"gpu_memory_used", "GPU Memory Used", "GB", func(g *GPUSummary) *Stats { return g.MemUsedGB }},
	{"sm_clock_frequency", "SM Clock Frequency", "MHz", func(g *GPUSummary) *Stats { return g.SMClock }},
	{"gpu_temperature", "GPU Temperature", "°C", func(g *GPUSummary) *Stats { return g.Temp }},
}
