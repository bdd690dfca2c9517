package metricexpr

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/mmapds"
)

// Variable is one name an expression may use (docs/metrics.md "User metrics" lists them).
type Variable struct {
	// Name is the identifier; Type its CEL type as written in docs; Unit its unit ("" for
	// none); Meaning what it holds and when a request has none.
	Name, Type, Unit, Meaning string
	typ                       *cel.Type
	get                       func(v *analyze.RequestView) (any, bool)
}

// ms converts nanoseconds to a CEL double of milliseconds.
func ms(ns int64) types.Double { return types.Double(float64(ns) / 1e6) }

// metric is the variable of a per-request metric under its short name (analyze.MetricDef.Var,
// e.g. ttft_ms), holding its value as a double. Counts of tokens are doubles too (holding
// whole numbers): "osl / 2" is then a true division and "osl - 1" mixes with the latencies as
// a person means it (docs/metrics.md "User metrics").
func metric(id analyze.MetricID, unit, meaning string) Variable {
	return Variable{Name: analyze.Metrics()[id].Var, Type: "double", Unit: unit, Meaning: meaning, typ: cel.DoubleType,
		get: func(v *analyze.RequestView) (any, bool) {
			x, ok := v.Value(id)
			return types.Double(x), ok
		}}
}

// phases are the phase names as CEL strings, made once.
var phases = map[mmapds.Phase]types.String{mmapds.PhaseProfile: types.String(mmapds.PhaseProfile.String()),
	mmapds.PhaseWarmup: types.String(mmapds.PhaseWarmup.String())}

// Variables are the variables every expression may use, besides the per-request metrics by
// tag.
var Variables = []Variable{
	metric(analyze.MTimeToFirstToken, "ms", "time_to_first_token: first content event − write start (valid streamed responses)"),
	metric(analyze.MRequestLatency, "ms", "request_latency: last content event − write start (valid requests)"),
	{Name: "isl", Type: "double", Unit: "tokens", Meaning: "input length: input_sequence_length, or the plan's ISL for a request without one (failed requests have one too)",
		typ: cel.DoubleType, get: func(v *analyze.RequestView) (any, bool) { return types.Double(v.InputTokens()), true }},
	metric(analyze.MOutputSequenceLength, "tokens", "output_sequence_length: output tokens, reasoning included (valid requests)"),
	metric(analyze.MReasoningTokenCount, "tokens", "reasoning_token_count (valid requests)"),
	{Name: "chunks_ms", Type: "list(double)", Unit: "ms", Meaning: "each content event's arrival since the write start, in order; chunks_ms[0] == ttft_ms (empty: no content event)",
		typ: cel.ListType(cel.DoubleType), get: func(v *analyze.RequestView) (any, bool) { return list[chunks]{v}, true }},
	{Name: "gaps_ms", Type: "list(double)", Unit: "ms", Meaning: "the gaps between consecutive content events (inter_chunk_latency) of a valid streamed response; 0 for events one read completed",
		typ: cel.ListType(cel.DoubleType), get: func(v *analyze.RequestView) (any, bool) { return list[gaps]{v}, true }},
	{Name: "reads", Type: "list(int)", Unit: "events", Meaning: "per socket read that completed content events, how many it completed (events_per_read)",
		typ: cel.ListType(cel.IntType), get: func(v *analyze.RequestView) (any, bool) { return list[reads]{v}, true }},
	{Name: "status", Type: "int", Unit: "", Meaning: "HTTP status; 0 when none was received",
		typ: cel.IntType, get: func(v *analyze.RequestView) (any, bool) { return types.Int(v.Status()), true }},
	{Name: "error", Type: "string", Unit: "", Meaning: `error kind (http_500, timeout, lost, …; docs/metrics.md "Errors"), "" when the request succeeded`,
		typ: cel.StringType, get: func(v *analyze.RequestView) (any, bool) { return types.String(v.ErrorKind()), true }},
	{Name: "valid", Type: "bool", Unit: "", Meaning: "whether the request succeeded (error == \"\")",
		typ: cel.BoolType, get: func(v *analyze.RequestView) (any, bool) { return types.Bool(v.Valid()), true }},
	{Name: "phase", Type: "string", Unit: "", Meaning: `the plan phase: "profile" (warmup requests are never analysed)`,
		typ: cel.StringType, get: func(v *analyze.RequestView) (any, bool) { return phases[v.Phase()], true }},
	{Name: "session", Type: "int", Unit: "", Meaning: "the request's conversation in the plan",
		typ: cel.IntType, get: func(v *analyze.RequestView) (any, bool) { return types.Int(v.Session()), true }},
	{Name: "turn", Type: "int", Unit: "", Meaning: "its 0-based turn in the conversation",
		typ: cel.IntType, get: func(v *analyze.RequestView) (any, bool) { return types.Int(v.Turn()), true }},
	{Name: "worker", Type: "int", Unit: "", Meaning: "the worker that sent it; -1 when no log holds it (lost, not sent)",
		typ: cel.IntType, get: func(v *analyze.RequestView) (any, bool) { return types.Int(v.Worker()), true }},
	{Name: "index", Type: "int", Unit: "", Meaning: "its plan index",
		typ: cel.IntType, get: func(v *analyze.RequestView) (any, bool) { return types.Int(v.Index()), true }},
	{Name: "send_offset_ms", Type: "double", Unit: "ms", Meaning: "its planned send instant since the run's start (none for a closed loop's request, sent when a slot frees)",
		typ: cel.DoubleType, get: func(v *analyze.RequestView) (any, bool) {
			t := v.IntendedNs()
			return ms(t), t >= 0
		}},
	metric(analyze.MScheduleLag, "ms", "schedule_lag: write start − planned send instant (open-loop requests that were sent)"),
	{Name: "usage", Type: "map(string, double)", Unit: "tokens", Meaning: "the server's usage block of a valid response: the fields it sent of prompt_tokens, completion_tokens, total_tokens, reasoning_tokens, cached_prompt_tokens (empty when none)",
		typ: cel.MapType(cel.StringType, cel.DoubleType), get: func(v *analyze.RequestView) (any, bool) { return usage{v}, true }},
}

// variables maps the names of Variables to their entry.
var variables = func() map[string]*Variable {
	m := make(map[string]*Variable, len(Variables))
	for i := range Variables {
		m[Variables[i].Name] = &Variables[i]
	}
	return m
}()

// activation resolves the variables for one request: it is the view itself, so making one
// per evaluation allocates nothing.
type activation struct{ v *analyze.RequestView }

// ResolveName implements interpreter.Activation: a variable, else a per-request metric by
// tag. A value the request does not have is no binding, so the expression gives no value.
func (a activation) ResolveName(name string) (any, bool) {
	if x, ok := variables[name]; ok {
		return x.get(a.v)
	}
	if x, ok := a.v.Metric(name); ok {
		return types.Double(x), true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (activation) Parent() interpreter.Activation { return nil }
