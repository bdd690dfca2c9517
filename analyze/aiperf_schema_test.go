package analyze

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The exports held against a schema derived from AIPerf's export models (JsonExportData,
// JsonMetricResult, TelemetryExportData, RunInfo, ErrorDetailsCount, MetricRecordInfo and
// TimesliceCollectionExportData; see shared/reference/aiperf.md §6): which keys each object
// may hold, which it must, and the JSON type of each. Models declared with extra="forbid"
// (JsonMetricResult and the telemetry models) reject any other key; the others, like
// AIPerf's base model, accept extra keys, except that any key naming a metric must hold a
// valid JsonMetricResult, and the top level of profile_export_aiperf.json accepts nothing
// but its declared fields, metric tags and our "llmbench" block, so that a misspelt key is
// caught here.

// jkind is a set of JSON value types.
type jkind uint8

const (
	jString jkind = 1 << iota
	jInt          // a number written without fraction or exponent
	jFloat        // any other number
	jBool
	jNull
	jObject
	jArray

	jNumber = jInt | jFloat
)

func (k jkind) String() string {
	var names []string
	for i, n := range []string{"string", "integer", "float", "bool", "null", "object", "array"} {
		if k&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// jschema describes one JSON value.
type jschema struct {
	kinds jkind
	// fields are an object's declared keys; required those it must have.
	fields   map[string]*jschema
	required []string
	// extra gives the schema of a key not in fields; nil, or a nil result, rejects the key.
	extra func(key string) *jschema
	// items is an array's element schema.
	items *jschema
	// format checks a string's content.
	format func(string) error
	// free accepts whatever the value holds.
	free bool
}

// anyValue accepts any JSON value.
var anyValue = &jschema{kinds: jString | jNumber | jBool | jNull | jObject | jArray, free: true}

func allowAny(string) *jschema { return anyValue }

// mapOf is a dict[str, v].
func mapOf(v *jschema) *jschema {
	return &jschema{kinds: jObject, extra: func(string) *jschema { return v }}
}

func listOf(v *jschema) *jschema { return &jschema{kinds: jArray, items: v} }

func optional(s *jschema) *jschema {
	c := *s
	c.kinds |= jNull
	return &c
}

var (
	sString = &jschema{kinds: jString}
	sInt    = &jschema{kinds: jInt}
	sNumber = &jschema{kinds: jNumber}
	sBool   = &jschema{kinds: jBool}
	// sDatetime is a pydantic datetime: ISO 8601, as Python's isoformat writes it.
	sDatetime = &jschema{kinds: jString, format: func(s string) error {
		for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano} {
			if _, err := time.Parse(layout, s); err == nil {
				return nil
			}
		}
		return fmt.Errorf("%q is not an ISO 8601 date-time", s)
	}}
)

// sMetricResult is JsonMetricResult (extra="forbid"): unit, then optional statistics.
var sMetricResult = func() *jschema {
	f := map[string]*jschema{"unit": sString}
	for _, k := range []string{"avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "sum"} {
		f[k] = optional(sNumber)
	}
	f["count"] = optional(sInt)
	return &jschema{kinds: jObject, fields: f, required: []string{"unit"}}
}()

// metricOr is the extra-key rule of a model that allows extras: a metric tag must hold a
// JsonMetricResult, anything else falls to rest.
func metricOr(rest func(string) *jschema) func(string) *jschema {
	return func(k string) *jschema {
		if _, ok := LookupMetric(k); ok {
			return sMetricResult
		}
		if rest == nil {
			return nil
		}
		return rest(k)
	}
}

// sErrorDetails is ErrorDetails; sErrorDetailsCount ErrorDetailsCount.
var (
	sErrorDetails = &jschema{kinds: jObject, extra: allowAny, required: []string{"message"},
		fields: map[string]*jschema{"code": optional(sInt), "type": optional(sString), "message": sString}}
	sErrorDetailsCount = &jschema{kinds: jObject, extra: allowAny, required: []string{"error_details", "count"},
		fields: map[string]*jschema{"error_details": sErrorDetails, "count": sInt}}
)

// sTelemetry is TelemetryExportData and its parts, all extra="forbid".
var sTelemetry = &jschema{kinds: jObject, required: []string{"summary", "endpoints"}, fields: map[string]*jschema{
	"summary": {kinds: jObject, required: []string{"start_time", "end_time"}, fields: map[string]*jschema{
		"start_time": sDatetime, "end_time": sDatetime,
		"endpoints_configured": optional(listOf(sString)), "endpoints_successful": optional(listOf(sString)),
	}},
	"endpoints": mapOf(&jschema{kinds: jObject, required: []string{"gpus"}, fields: map[string]*jschema{
		"gpus": mapOf(&jschema{kinds: jObject, required: []string{"gpu_index", "gpu_name", "gpu_uuid", "hostname", "metrics"},
			fields: map[string]*jschema{
				"gpu_index": sInt, "gpu_name": sString, "gpu_uuid": sString, "hostname": optional(sString),
				"metrics": mapOf(sMetricResult), "namespace": optional(sString), "pod_name": optional(sString),
			}}),
	}}),
	"error_summary": optional(listOf(sErrorDetailsCount)),
}}

// sRunInfo is RunInfo.
var sRunInfo = &jschema{kinds: jObject, extra: allowAny, fields: map[string]*jschema{
	"benchmark_id": optional(sString), "sweep_id": optional(sString), "random_seed": optional(sInt),
	"trial": optional(sInt), "run_label": optional(sString), "variation_label": optional(sString),
	"variation_index": optional(sInt), "variation_values": optional(mapOf(anyValue)), "cli_command": optional(sString),
}}

// sExport is JsonExportData, the whole of profile_export_aiperf.json.
var sExport = func() *jschema {
	f := map[string]*jschema{
		"schema_version": optional(sString), "aiperf_version": optional(sString), "benchmark_id": optional(sString),
		"telemetry_data": optional(sTelemetry), "input_config": optional(mapOf(anyValue)), "run_info": optional(sRunInfo),
		"was_cancelled": optional(sBool), "error_summary": optional(listOf(sErrorDetailsCount)),
		"branch_stats": optional(mapOf(anyValue)), "start_time": optional(sDatetime), "end_time": optional(sDatetime),
	}
	for _, id := range aiperfDeclared {
		f[catalog[id].Tag] = optional(sMetricResult)
	}
	return &jschema{kinds: jObject, fields: f, extra: metricOr(func(k string) *jschema {
		if k == "llmbench" {
			return sOwnBlock
		}
		return nil
	})}
}()

// sOwnBlock is our block: free-form, but extra_stats holds an object per metric tag.
var sOwnBlock = &jschema{kinds: jObject, extra: allowAny, required: []string{"extra_stats"}, fields: map[string]*jschema{
	"extra_stats": {kinds: jObject, extra: func(k string) *jschema {
		if _, ok := LookupMetric(k); !ok {
			return nil
		}
		return &jschema{kinds: jObject, required: []string{"p99_9"}, fields: map[string]*jschema{"p99_9": optional(sNumber), "approx": sBool}}
	}},
}}

// sTimeslices is TimesliceCollectionExportData; each TimesliceData allows extras (the metrics).
var sTimeslices = &jschema{kinds: jObject, required: []string{"timeslices"}, fields: map[string]*jschema{
	"timeslices": listOf(&jschema{kinds: jObject, extra: metricOr(func(k string) *jschema {
		if k == "llmbench" {
			return sOwnBlock
		}
		return nil
	}), fields: map[string]*jschema{
		"start_ns": optional(sInt), "end_ns": optional(sInt), "is_complete": optional(sBool),
		"timeslice_index": sInt, "start_time": sDatetime, "end_time": sDatetime,
	}}),
	"input_config": optional(mapOf(anyValue)),
}}

// sRecord is MetricRecordInfo, one line of profile_export.jsonl. request_start_ns,
// request_end_ns and worker_id may be null only on our not_sent and lost records (checked by
// checkRecord), requests AIPerf would have no record of.
var sRecord = &jschema{kinds: jObject, extra: allowAny, required: []string{"metadata", "metrics"}, fields: map[string]*jschema{
	"metadata": {kinds: jObject, extra: allowAny,
		required: []string{"session_num", "request_start_ns", "request_end_ns", "worker_id", "record_processor_id", "benchmark_phase"},
		fields: map[string]*jschema{
			"session_num": sInt, "x_request_id": optional(sString), "x_correlation_id": optional(sString),
			"conversation_id": optional(sString), "turn_index": optional(sInt), "credit_issued_ns": optional(sInt),
			"request_start_ns": optional(sInt), "request_ack_ns": optional(sInt), "request_end_ns": optional(sInt),
			"worker_id": optional(sString), "record_processor_id": sString,
			"benchmark_phase": {kinds: jString, format: func(s string) error {
				if s != "profiling" && s != "warmup" {
					return fmt.Errorf("benchmark_phase %q is not a CreditPhase", s)
				}
				return nil
			}},
			"was_cancelled": sBool, "cancellation_time_ns": optional(sInt),
		}},
	"metrics": mapOf(&jschema{kinds: jObject, extra: allowAny, required: []string{"value", "unit"},
		fields: map[string]*jschema{"value": {kinds: jNumber | jArray, items: sNumber}, "unit": sString}}),
	"error": optional(sErrorDetails),
}}

// decodeJSON decodes b keeping numbers as json.Number, so integers stay distinguishable.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func kindOf(v any) jkind {
	switch x := v.(type) {
	case nil:
		return jNull
	case string:
		return jString
	case bool:
		return jBool
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return jFloat
		}
		return jInt
	case map[string]any:
		return jObject
	case []any:
		return jArray
	}
	return 0
}

// validate checks v against s and returns every violation, each naming its path.
func validate(path string, v any, s *jschema) []string {
	k := kindOf(v)
	if s.kinds&k == 0 {
		return []string{fmt.Sprintf("%s: %s, want %s", path, k, s.kinds)}
	}
	if s.free {
		return nil
	}
	var errs []string
	switch x := v.(type) {
	case string:
		if s.format != nil {
			if err := s.format(x); err != nil {
				errs = append(errs, path+": "+err.Error())
			}
		}
	case []any:
		if s.items != nil {
			for i, e := range x {
				errs = append(errs, validate(fmt.Sprintf("%s[%d]", path, i), e, s.items)...)
			}
		}
	case map[string]any:
		for _, r := range s.required {
			if _, ok := x[r]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required key %q missing", path, r))
			}
		}
		keys := make([]string, 0, len(x))
		for key := range x {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			sub := s.fields[key]
			if sub == nil && s.extra != nil {
				sub = s.extra(key)
			}
			if sub == nil {
				errs = append(errs, fmt.Sprintf("%s: key %q not allowed", path, key))
				continue
			}
			errs = append(errs, validate(path+"."+key, x[key], sub)...)
		}
	}
	return errs
}

// checkRecord validates one JSONL line, with our exception for records of requests that
// were never sent or whose end is unknown.
func checkRecord(line []byte) []string {
	v, err := decodeJSON(line)
	if err != nil {
		return []string{err.Error()}
	}
	errs := validate("record", v, sRecord)
	md, _ := v.(map[string]any)["metadata"].(map[string]any)
	unsent := md["outcome"] == "not_sent" || md["outcome"] == "lost"
	for _, k := range []string{"request_start_ns", "request_end_ns", "worker_id"} {
		if md[k] == nil && !unsent {
			errs = append(errs, fmt.Sprintf("record.metadata.%s: null on a %v record", k, md["outcome"]))
		}
	}
	return errs
}

// checkExports validates every export of one analysis.
func checkExports(t *testing.T, name string, out map[string][]byte) {
	t.Helper()
	for ext, sch := range map[string]*jschema{"json": sExport, "timeslices.json": sTimeslices} {
		b, ok := out[ext]
		if !ok {
			continue
		}
		v, err := decodeJSON(b)
		if err != nil {
			t.Fatalf("%s.%s: %v", name, ext, err)
		}
		for _, e := range validate(ext, v, sch) {
			t.Errorf("%s: %s", name, e)
		}
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(out["jsonl"], []byte("\n")), []byte("\n")) {
		for _, e := range checkRecord(line) {
			t.Errorf("%s.jsonl line %d: %s", name, i+1, e)
		}
	}
	checkCSVIntegers(t, name, out["csv"])
}

// checkCSVIntegers checks that the CSV's single values of whole-number metrics are integers
// and the others have two decimals, as AIPerf's exporter writes them.
func checkCSVIntegers(t *testing.T, name string, b []byte) {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s.csv: %v", name, err)
	}
	byName := map[string]MetricDef{}
	for _, d := range Metrics() {
		byName[csvName(d.Header, d.Unit)] = d
	}
	singles := false
	seen := 0
	for _, row := range rows {
		switch {
		case len(row) == 2 && row[0] == "Metric":
			singles = true
		case len(row) != 2 || !singles:
			singles = singles && len(row) == 2
		default:
			d, ok := byName[row[0]]
			if !ok {
				t.Errorf("%s.csv: row %q names no metric", name, row[0])
				continue
			}
			seen++
			_, intErr := strconv.ParseInt(row[1], 10, 64)
			if d.Int && intErr != nil {
				t.Errorf("%s.csv: %s = %q, want an integer", name, row[0], row[1])
			}
			if !d.Int && !strings.Contains(row[1], ".") {
				t.Errorf("%s.csv: %s = %q, want two decimals", name, row[0], row[1])
			}
		}
	}
	if seen == 0 {
		t.Errorf("%s.csv: no single values found", name)
	}
}

// Every export of every golden scenario fits AIPerf's models, as written now and as held in
// the golden files.
func TestExportsFitAIPerfSchema(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			s, records := analyseDir(t, gc.opts(), gc.sc.build(t, t.TempDir()))
			out := outputs(t, s, records)
			checkExports(t, gc.name, out)
			if !*update {
				golden := map[string][]byte{}
				for ext := range out {
					b, err := os.ReadFile(filepath.Join(goldenDir, gc.name+"."+ext+".golden"))
					if err != nil {
						t.Fatalf("%v (run go test ./analyze -run TestGolden -update)", err)
					}
					golden[ext] = b
				}
				checkExports(t, gc.name+".golden", golden)
			}
			// The fields AIPerf declares that a run with valid requests always has.
			var doc map[string]any
			if err := json.Unmarshal(out["json"], &doc); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"min_request_timestamp", "max_response_timestamp", "total_reasoning_tokens", "benchmark_duration"} {
				if _, ok := doc[k]; !ok {
					t.Errorf("%s: no %s", gc.name, k)
				}
			}
		})
	}
}

// The JSON carries min_request_timestamp and max_response_timestamp exactly in the CSV,
// spanning benchmark_duration; error_isl comes with total_error_isl; the session id that
// replay sent in a header is the record's x_correlation_id.
func TestAIPerfFieldsAdded(t *testing.T) {
	gc := goldenCases[0]
	s, records := analyseDir(t, gc.opts(), gc.sc.build(t, t.TempDir()))
	lo, okLo := s.Result("min_request_timestamp")
	hi, okHi := s.Result("max_response_timestamp")
	dur, okDur := s.Result("benchmark_duration")
	if !okLo || !okHi || !okDur {
		t.Fatal("timestamps or duration missing")
	}
	if lo.Exact != s.StartUnixNs || hi.Exact != s.EndUnixNs || lo.Unit != "ns" {
		t.Errorf("timestamps %d..%d %s, want %d..%d ns", lo.Exact, hi.Exact, lo.Unit, s.StartUnixNs, s.EndUnixNs)
	}
	if got := float64(hi.Exact-lo.Exact) / 1e9; got != dur.Value {
		t.Errorf("max_response − min_request = %v s, benchmark_duration %v s", got, dur.Value)
	}
	var csvOut bytes.Buffer
	if err := WriteAIPerfCSV(&csvOut, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Minimum Request Timestamp (ns)," + strconv.FormatInt(s.StartUnixNs, 10) + "\r\n",
		"Request Count,35\r\n",
		"Total Error Input Sequence Length (tokens),500\r\n",
	} {
		if !strings.Contains(csvOut.String(), want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	if _, ok := s.Result("total_error_isl"); !ok {
		t.Error("error_isl without total_error_isl")
	}
	first := records[:bytes.IndexByte(records, '\n')]
	var rec struct {
		Metadata struct {
			Session     int     `json:"session_num"`
			Correlation *string `json:"x_correlation_id"`
			RequestID   *string `json:"x_request_id"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(first, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Metadata.Correlation == nil || *rec.Metadata.Correlation != strconv.Itoa(rec.Metadata.Session) || rec.Metadata.RequestID != nil {
		t.Errorf("x_correlation_id %v, x_request_id %v for session %d", rec.Metadata.Correlation, rec.Metadata.RequestID, rec.Metadata.Session)
	}
	// Without a session header nothing was sent: null.
	sc := gc.sc
	sc.sessionHeader = ""
	_, records = analyseDir(t, gc.opts(), sc.build(t, t.TempDir()))
	if !bytes.Contains(records, []byte(`"x_correlation_id":null`)) {
		t.Error("x_correlation_id set although no session header was sent")
	}
}

// The schema rejects what AIPerf's models reject: p99_9 or any other key in a metric block,
// a float count, a missing unit, an unknown top-level or telemetry key.
func TestAIPerfSchemaRejects(t *testing.T) {
	const block = `{"unit":"ms","avg":1.0,"p50":1.0,"min":1,"max":2.5,"std":0.5,"count":3,"sum":3.0}`
	const gpu = `{"gpu_index":0,"gpu_name":"H200","gpu_uuid":"GPU-1","hostname":"h","metrics":{"gpu_power_usage":` + block + `}}`
	tele := func(g string) string {
		return `{"summary":{"start_time":"2026-01-01T00:00:00.000000","end_time":"2026-01-01T00:00:01.000000"},"endpoints":{"nvml://h":{"gpus":{"gpu_0":` + g + `}}}}`
	}
	doc := func(extra string) string {
		return `{"schema_version":"1.3","time_to_first_token":` + block + `,"request_count":{"unit":"requests","avg":3.0},` +
			`"schedule_lag":` + block + `,"llmbench":{"extra_stats":{"time_to_first_token":{"p99_9":2.0}}}` + extra + `}`
	}
	tests := []struct {
		name, doc, want string
	}{
		{"valid", doc(`,"telemetry_data":` + tele(gpu)), ""},
		{"p99_9 in a declared metric", doc(`,"request_latency":{"unit":"ms","avg":1.0,"p99_9":2.0}`), `request_latency: key "p99_9" not allowed`},
		{"approx in an undeclared AIPerf metric", doc(`,"time_to_first_output_token":{"unit":"ms","avg":1.0,"approx":true}`), `time_to_first_output_token: key "approx" not allowed`},
		{"float count", doc(`,"request_latency":{"unit":"ms","count":3.0}`), "request_latency.count: float, want integer|null"},
		{"no unit", doc(`,"request_latency":{"avg":1.0}`), `request_latency: required key "unit" missing`},
		{"string avg", doc(`,"request_latency":{"unit":"ms","avg":"1"}`), "request_latency.avg: string"},
		{"unknown top-level key", doc(`,"p99_9_time_to_first_token":1.0`), `key "p99_9_time_to_first_token" not allowed`},
		{"extra key in a GPU summary", doc(`,"telemetry_data":` + tele(strings.Replace(gpu, `"gpu_index"`, `"gpu_model":"x","gpu_index"`, 1))), `key "gpu_model" not allowed`},
		{"p99_9 in a GPU metric", doc(`,"telemetry_data":` + tele(strings.Replace(gpu, `"sum":3.0`, `"sum":3.0,"p99_9":1.0`, 1))), `gpu_power_usage: key "p99_9" not allowed`},
		{"bad start_time", doc(`,"start_time":"yesterday"`), "not an ISO 8601 date-time"},
		{"extra_stats of no metric", doc(`,"llmbench":{"extra_stats":{"ttft":{"p99_9":1.0}}}`), `key "ttft" not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeJSON([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			errs := validate("json", v, sExport)
			if tt.want == "" {
				if len(errs) > 0 {
					t.Errorf("valid document rejected: %v", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Errorf("errors %q, want one containing %q", errs, tt.want)
			}
		})
	}
	// Records: null send instants are ours alone, on requests never sent.
	rec := func(outcome, start string) []byte {
		return []byte(`{"metadata":{"session_num":1,"request_start_ns":` + start + `,"request_end_ns":2,"worker_id":"worker_000",` +
			`"record_processor_id":"analyze","benchmark_phase":"profiling","outcome":"` + outcome + `"},"metrics":{},"error":null}`)
	}
	if errs := checkRecord(rec("not_sent", "null")); len(errs) > 0 {
		t.Errorf("not_sent record rejected: %v", errs)
	}
	if errs := checkRecord(rec("completed", "null")); len(errs) == 0 {
		t.Error("completed record without request_start_ns accepted")
	}
	if errs := checkRecord([]byte(`{"metadata":{"session_num":1},"metrics":{"x":{"value":"a","unit":"ms"}}}`)); len(errs) < 2 {
		t.Errorf("malformed record: %v", errs)
	}
}

// A plan that names a model list (--model a,b) exports each model as its own name, as
// AIPerf's model_names does.
func TestModelNamesList(t *testing.T) {
	gc := goldenCases[0]
	s, _ := analyseDir(t, gc.opts(), gc.sc.build(t, t.TempDir()))
	s.Model = "org/a,org/b"
	var out bytes.Buffer
	if err := WriteAIPerfJSON(&out, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte(`"model_names": [`)) && !bytes.Contains(out.Bytes(), []byte(`"model_names":[`)) {
		t.Fatalf("no model_names in %s", out.String())
	}
	var doc struct {
		InputConfig struct {
			Endpoint struct {
				ModelNames []string `json:"model_names"`
			} `json:"endpoint"`
		} `json:"input_config"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.InputConfig.Endpoint.ModelNames; len(got) != 2 || got[0] != "org/a" || got[1] != "org/b" {
		t.Fatalf("model_names %q, want [org/a org/b]", got)
	}
}
