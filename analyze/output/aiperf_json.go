package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/pyjson"
)

// SchemaVersion is the profile_export_aiperf.json schema version this package writes
// (AIPerf's JsonExportData.SCHEMA_VERSION).
const SchemaVersion = "1.3"

// metricBlock is one metric's stats block, exactly AIPerf's JsonMetricResult (which forbids
// other keys): unit and avg, and for distributions the percentiles p1…p99, min, max, std,
// count and sum, in its field order. What that model has no field for (p99_9, approx) is
// in extraStats.
func metricBlock(r *analyze.Result) *pyjson.Object {
	o := &pyjson.Object{}
	o.Add("unit", r.Unit)
	if r.Stats == nil {
		o.Add("avg", pyjson.Float(r.Value))
		return o
	}
	st := r.Stats
	o.Add("avg", pyjson.Float(st.Avg))
	for i, name := range analyze.PercentileNames[:9] {
		o.Add(name, pyjson.Float(st.P[i]))
	}
	o.Add("min", pyjson.Float(st.Min))
	o.Add("max", pyjson.Float(st.Max))
	o.Add("std", pyjson.Float(st.Std))
	o.Add("count", st.Count)
	o.Add("sum", pyjson.Float(st.Sum))
	return o
}

// extraStats holds, per distribution, the statistics AIPerf's metric block has no field for:
// p99_9, approx when the percentiles come from a histogram, and for a user metric the
// requests it skipped (no value). It is written under
// llmbench.extra_stats, so that every metric block stays a valid JsonMetricResult.
func extraStats(results []analyze.Result) *pyjson.Object {
	o := &pyjson.Object{}
	for i := range results {
		r := &results[i]
		if r.Stats == nil {
			continue
		}
		e := (&pyjson.Object{}).Add("p99_9", pyjson.Float(r.Stats.P[9]))
		if r.Stats.Approx {
			e.Add("approx", true)
		}
		if r.User {
			e.Add("skipped", r.Skipped) // the requests a user metric had no value for
		}
		o.Add(r.Tag, e)
	}
	return o
}

// isoTime formats Unix nanoseconds like Python's datetime.isoformat, in UTC.
func isoTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000")
}

// inputConfig is the resolved configuration, shaped like AIPerf's input_config where the
// concepts match, plus the plan.
func inputConfig(s *analyze.Summary) *pyjson.Object {
	ep := &pyjson.Object{}
	ep.Add("model_names", strings.Split(s.Model, ",")) // a plan may name a list: --model a,b
	ep.Add("type", s.Endpoint)
	ep.Add("streaming", s.Streaming)
	if len(s.URLs) > 0 {
		ep.Add("url", s.URLs[0])
		ep.Add("urls", s.URLs)
	}
	input := &pyjson.Object{}
	input.Add("random_seed", s.Seed)
	if s.Tokenizer != "" {
		input.Add("tokenizer", (&pyjson.Object{}).Add("name", s.Tokenizer))
	}
	loadgen := &pyjson.Object{}
	if s.Concurrency > 0 {
		loadgen.Add("concurrency", s.Concurrency)
	}
	if s.OfferedRate > 0 {
		loadgen.Add("request_rate", pyjson.Float(s.OfferedRate))
	}
	loadgen.Add("request_count", s.Counts.Profile)
	loadgen.Add("warmup_request_count", s.Counts.Warmup)
	o := &pyjson.Object{}
	o.Add("endpoint", ep)
	o.Add("input", input)
	o.Add("loadgen", loadgen)
	if s.CommandLine != "" {
		o.Add("cli_command", s.CommandLine)
	}
	plan := &pyjson.Object{}
	plan.Add("path", s.PlanPathGiven())
	plan.Add("hash", s.PlanHash)
	if s.Spec != nil {
		plan.Add("spec", s.Spec)
	}
	o.Add("plan", plan)
	return o
}

// WriteAIPerfJSON writes profile_export_aiperf.json in AIPerf's schema: one stats block per
// metric tag (display units), schema_version, benchmark_id, input_config, run_info,
// was_cancelled, error_summary, start_time/end_time, telemetry_data when GPU samples exist,
// and this tool's own block under "llmbench".
func WriteAIPerfJSON(w io.Writer, s *analyze.Summary) error {
	o := &pyjson.Object{}
	id := s.BenchmarkID()
	o.Add("schema_version", SchemaVersion)
	o.Add("benchmark_id", id)
	done := map[analyze.MetricID]bool{}
	for _, mid := range analyze.AIPerfDeclared() {
		if r := s.ResultOf(mid); r != nil {
			o.Add(r.Tag, metricBlock(r))
			done[mid] = true
		}
	}
	if t := telemetryData(s); t != nil {
		o.Add("telemetry_data", t)
	}
	o.Add("input_config", inputConfig(s))
	runInfo := &pyjson.Object{}
	runInfo.Add("benchmark_id", id)
	runInfo.Add("random_seed", s.Seed)
	runInfo.Add("trial", 0)
	runInfo.Add("run_label", "run_0001")
	runInfo.Add("variation_label", "base")
	runInfo.Add("variation_index", 0)
	runInfo.Add("variation_values", &pyjson.Object{})
	if s.CommandLine != "" {
		runInfo.Add("cli_command", s.CommandLine)
	}
	o.Add("run_info", runInfo)
	o.Add("was_cancelled", s.WasCancelled)
	o.Add("error_summary", errorSummaryJSON(s.Errors))
	if s.Sessions != nil {
		o.Add("branch_stats", branchStatsJSON(s.Sessions.Branch)) // AIPerf's, of DAG runs
	}
	o.Add("start_time", isoTime(s.StartUnixNs))
	o.Add("end_time", isoTime(s.EndUnixNs))
	for i := range s.Results {
		r := &s.Results[i]
		if !done[r.ID] {
			o.Add(r.Tag, metricBlock(r))
		}
	}
	o.Add("llmbench", ownBlock(s))
	b, err := pyjson.MarshalIndent(o)
	if err != nil {
		return fmt.Errorf("analyze: profile export: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// ownBlock holds what AIPerf's schema has no place for: the run's accounting, the verdict,
// worker health, notes and the statistics metric blocks cannot carry (extra_stats).
func ownBlock(s *analyze.Summary) *pyjson.Object {
	c := s.Counts
	counts := &pyjson.Object{}
	counts.Add("planned", c.Planned).Add("profile", c.Profile).Add("warmup", c.Warmup).
		Add("warmup_seen", c.WarmupSeen).Add("warmup_errors", c.WarmupErrors).Add("sent", c.Sent).Add("valid", c.Valid).
		Add("errors", c.Errors).Add("gate_errors", c.GateErrors).Add("lost", c.Lost).Add("not_sent", c.NotSent).
		Add("not_due", c.NotDue)
	v := s.Verdict
	verdict := &pyjson.Object{}
	verdict.Add("known", v.Known).Add("schedule_kept", v.Kept)
	if v.LagKnown {
		verdict.Add("dispatch_lag_p99_ms", pyjson.Float(v.DispatchLagP99Ms))
	}
	verdict.Add("max_schedule_lag_ms", pyjson.Float(v.MaxLagMs))
	if v.CPUKnown {
		verdict.Add("busiest_worker", v.BusiestWorker).Add("busiest_worker_cpu_pct", pyjson.Float(v.BusiestWorkerPct))
		if v.SharedBy > 1 {
			verdict.Add("busiest_cpu_shared_by", v.SharedBy)
		}
	}
	verdict.Add("max_worker_cpu_pct", pyjson.Float(v.MaxCPUPct))
	if v.Jitter {
		verdict.Add("arrivals_jittered", true)
	}
	if v.FloorKnown {
		verdict.Add("machine_floor_timer_lag_p50_ms", pyjson.Float(v.FloorTimerLagP50Ms)).Add("machine_floor_timer_lag_p99_ms", pyjson.Float(v.FloorTimerLagP99Ms)).
			Add("machine_floor_loopback_rtt_us", pyjson.Float(v.FloorLoopbackRTTUs)).Add("machine_floor_syscall_us", pyjson.Float(v.FloorSyscallUs))
	}
	reasons := make([]any, 0, len(v.Reasons))
	for _, r := range v.Reasons {
		reasons = append(reasons, r)
	}
	verdict.Add("reasons", reasons)
	if sc := v.Server; sc.ServerClosed > 0 || sc.Reconnects > 0 {
		verdict.Add("server_closed_requests", sc.ServerClosed).Add("server_reconnects", sc.Reconnects).
			Add("server_closes_after_each_response", sc.AfterEachResponse)
	}
	workers := make([]any, 0, len(s.Workers))
	for _, w := range s.Workers {
		wo := &pyjson.Object{}
		wo.Add("run", w.Run).Add("worker", w.Worker).Add("requests", w.Requests)
		if w.CPUPct >= 0 {
			wo.Add("cpu_pct", pyjson.Float(w.CPUPct))
		}
		wo.Add("status", w.Status)
		if w.Torn > 0 {
			wo.Add("torn_bytes", w.Torn)
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
	o := &pyjson.Object{}
	o.Add("tool", s.Tool).Add("tool_version", s.ToolVersion).Add("plan_hash", s.PlanHash)
	o.Add("token_count", s.TokenCount).Add("tokenizer", s.Tokenizer)
	o.Add("run_status", s.RunStatus)
	o.Add("counts", counts).Add("verdict", verdict).Add("goodput_slos", slos)
	o.Add("workers", workers).Add("notes", notes)
	if s.Claim != nil {
		o.Add("benchmark_claim", ClaimJSON(s.Claim))
	}
	if sm := serverMetricsJSON(s); sm != nil {
		o.Add("server_metrics", sm)
	}
	if st := serverTracesJSON(s); st != nil {
		o.Add("server_traces", st)
	}
	if s.Sessions != nil {
		o.Add("sessions", sessionsJSON(s.Sessions))
	}
	if u := userMetricsJSON(s.Registry); len(u) > 0 {
		o.Add("user_metrics", u) // the definitions of the user metrics (groups_export.go)
	}
	if s.Selection != nil {
		o.Add("selection", selectionJSON(s.Selection))
		if s.Selection.GroupBy != "" {
			o.Add("groups", groupsJSON(s.Groups))
		}
	}
	o.Add("extra_stats", extraStats(s.Results))
	return o
}

// telemetryData is AIPerf's telemetry_data block: per GPU summaries keyed by endpoint.
func telemetryData(s *analyze.Summary) *pyjson.Object {
	if len(s.GPUs) == 0 {
		return nil
	}
	endpoints := &pyjson.Object{}
	var names []string
	byRun := map[int]*pyjson.Object{}
	for _, g := range s.GPUs {
		gpus := byRun[g.Run]
		if gpus == nil {
			gpus = &pyjson.Object{}
			byRun[g.Run] = gpus
			name := s.GPUEndpoint(g.Run)
			names = append(names, name)
			endpoints.Add(name, (&pyjson.Object{}).Add("gpus", gpus))
		}
		metrics := &pyjson.Object{}
		for _, m := range gpuMetricDefs {
			st := m.get(&g)
			if st == nil {
				continue
			}
			metrics.Add(m.key, metricBlock(&analyze.Result{MetricDef: analyze.MetricDef{Unit: m.unit, Alias: -1}, Stats: st}))
		}
		if g.HasEnergy {
			metrics.Add("energy_consumption", (&pyjson.Object{}).Add("unit", "MJ").Add("avg", pyjson.Float(g.EnergyJ/1e6)))
		}
		gs := &pyjson.Object{}
		gs.Add("gpu_index", g.GPU).Add("gpu_name", g.Name).Add("gpu_uuid", g.UUID).Add("hostname", s.Host(g.Run))
		gs.Add("metrics", metrics)
		gpus.Add("gpu_"+strconv.Itoa(g.GPU), gs)
	}
	sum := &pyjson.Object{}
	sum.Add("endpoints_configured", names).Add("endpoints_successful", names)
	sum.Add("start_time", isoTime(s.StartUnixNs)).Add("end_time", isoTime(s.EndUnixNs))
	return (&pyjson.Object{}).Add("summary", sum).Add("endpoints", endpoints)
}

// gpuMetricDefs maps the GPU fields to AIPerf's telemetry metric keys and display names.
var gpuMetricDefs = []struct {
	key, display, unit string
	get                func(*analyze.GPUSummary) *analyze.Stats
}{
	{"gpu_power_usage", "GPU Power Usage", "W", func(g *analyze.GPUSummary) *analyze.Stats { return g.Power }},
	{"gpu_utilization", "GPU Utilization", "%", func(g *analyze.GPUSummary) *analyze.Stats { return g.Util }},
	{"memory_copy_utilization", "Memory Copy Utilization", "%", func(g *analyze.GPUSummary) *analyze.Stats { return g.MemUtil }},
	{"gpu_memory_used", "GPU Memory Used", "GB", func(g *analyze.GPUSummary) *analyze.Stats { return g.MemUsedGB }},
	{"sm_clock_frequency", "SM Clock Frequency", "MHz", func(g *analyze.GPUSummary) *analyze.Stats { return g.SMClock }},
	{"gpu_temperature", "GPU Temperature", "°C", func(g *analyze.GPUSummary) *analyze.Stats { return g.Temp }},
}
