package mockllm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The server's request spans, as vLLM emits them with --otlp-traces-endpoint: one
// llm_request SERVER span per request served, child of the request's W3C traceparent, with
// vLLM's attribute names and units (seconds) and the values of what the mock did: its queue
// (the wait for a batch slot under MaxBatch), its prefill (admission to the first token
// event's write) and its decode (first to last token event). Exported through the
// OpenTelemetry Go SDK's OTLP exporters and BatchSpanProcessor, as vLLM's Python SDK does.

// The OTLP trace protocols (vLLM reads OTEL_EXPORTER_OTLP_TRACES_PROTOCOL; grpc by default).
const (
	TraceProtocolGRPC         = "grpc"
	TraceProtocolHTTPProtobuf = "http/protobuf"
)

// TraceScope is the instrumentation scope of the spans (vLLM's tracer name); SpanName their
// name.
const (
	TraceScope = "vllm.llm_engine"
	SpanName   = "llm_request"
)

// vLLM's span attribute names (vllm/tracing.py SpanAttributes).
const (
	AttrRequestID            = "gen_ai.request.id"
	AttrResponseModel        = "gen_ai.response.model"
	AttrRequestMaxTokens     = "gen_ai.request.max_tokens"
	AttrRequestN             = "gen_ai.request.n"
	AttrPromptTokens         = "gen_ai.usage.prompt_tokens"
	AttrCompletionTokens     = "gen_ai.usage.completion_tokens"
	AttrNumSequences         = "gen_ai.usage.num_sequences"
	AttrTimeInQueue          = "gen_ai.latency.time_in_queue"
	AttrTimeToFirstToken     = "gen_ai.latency.time_to_first_token"
	AttrE2E                  = "gen_ai.latency.e2e"
	AttrTimeInScheduler      = "gen_ai.latency.time_in_scheduler"
	AttrTimeInModelForward   = "gen_ai.latency.time_in_model_forward"
	AttrTimeInModelExecute   = "gen_ai.latency.time_in_model_execute"
	AttrTimeInModelPrefill   = "gen_ai.latency.time_in_model_prefill"
	AttrTimeInModelDecode    = "gen_ai.latency.time_in_model_decode"
	AttrTimeInModelInference = "gen_ai.latency.time_in_model_inference"
)

// TraceExport says where and how the server exports its spans.
type TraceExport struct {
	// Endpoint is the collector's URL (vLLM's --otlp-traces-endpoint): http://HOST:4317 for
	// gRPC; for OTLP/HTTP, /v1/traces is added when the URL has no path.
	Endpoint string
	// Protocol is TraceProtocolGRPC ("" too) or TraceProtocolHTTPProtobuf.
	Protocol string
	// BatchDelay is the BatchSpanProcessor's delay between exports (0: the SDK's, 5 s or
	// OTEL_BSP_SCHEDULE_DELAY).
	BatchDelay time.Duration
}

// NewTracerProvider builds the span pipeline of e: its OTLP exporter behind a
// BatchSpanProcessor. Shut it down to flush the spans still batched.
func NewTracerProvider(ctx context.Context, e TraceExport) (*sdktrace.TracerProvider, error) {
	u, err := url.Parse(e.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want http://HOST:PORT or https://HOST:PORT", e.Endpoint)
	}
	var exp sdktrace.SpanExporter
	switch e.Protocol {
	case "", TraceProtocolGRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host)}
		if u.Scheme == "http" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	case TraceProtocolHTTPProtobuf:
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	default:
		return nil, fmt.Errorf("protocol %q: want %s or %s", e.Protocol, TraceProtocolGRPC, TraceProtocolHTTPProtobuf)
	}
	if err != nil {
		return nil, err
	}
	var bopts []sdktrace.BatchSpanProcessorOption
	if e.BatchDelay > 0 {
		bopts = append(bopts, sdktrace.WithBatchTimeout(e.BatchDelay))
	}
	res := resource.NewSchemaless(attribute.String("service.name", "mockllm"))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, bopts...), sdktrace.WithResource(res)), nil
}

// spanInfo is what a request's span says besides its timing.
type spanInfo struct {
	parent           context.Context // carries the request's traceparent, when it had one
	id, model        string
	maxTokens        int
	promptTokens     int
	completionTokens int
}

// newSpanInfo starts a request's span information, or returns nil when no spans are
// exported.
func (s *Server) newSpanInfo(r *http.Request) *spanInfo {
	if s.tracer == nil {
		return nil
	}
	return &spanInfo{parent: propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(r.Header))}
}

// emitSpan ends a request's span: started at arrival, ended now, its durations from the
// schedule record (times since arrival on the monotonic clock).
func (s *Server) emitSpan(si *spanInfo, rec *ScheduleRecord, arrival int64) {
	now := monoNow()
	e2e := now - arrival
	queue := rec.StartNs
	first, last := e2e, e2e // no token event written: the response ended first
	if n := len(rec.SentNs); n > 0 {
		first, last = rec.SentNs[0], rec.SentNs[n-1]
	}
	prefill := first - queue
	decode := last - first
	sec := func(ns int64) float64 { return float64(ns) / 1e9 }
	attrs := []attribute.KeyValue{
		attribute.String(AttrRequestID, si.id),
		attribute.String(AttrResponseModel, si.model),
		attribute.Int(AttrRequestN, 1),
		attribute.Int(AttrPromptTokens, si.promptTokens),
		attribute.Int(AttrCompletionTokens, si.completionTokens),
		attribute.Int(AttrNumSequences, 1),
		attribute.Float64(AttrTimeInQueue, sec(queue)),
		attribute.Float64(AttrTimeToFirstToken, sec(first)),
		attribute.Float64(AttrE2E, sec(e2e)),
		attribute.Float64(AttrTimeInScheduler, 0), // the mock schedules nothing
		attribute.Float64(AttrTimeInModelForward, sec(last-queue)),
		attribute.Float64(AttrTimeInModelExecute, sec(last-queue)),
		attribute.Float64(AttrTimeInModelPrefill, sec(prefill)),
		attribute.Float64(AttrTimeInModelDecode, sec(decode)),
		attribute.Float64(AttrTimeInModelInference, sec(last-queue)),
	}
	if si.maxTokens > 0 {
		attrs = append(attrs, attribute.Int(AttrRequestMaxTokens, si.maxTokens))
	}
	_, span := s.tracer.Start(si.parent, SpanName, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(monoBase.Add(time.Duration(arrival))), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(monoBase.Add(time.Duration(now))))
}
