package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// No value a run can hold stops its page: server metrics, GPU statistics and series that are
// infinite or NaN (a server may expose any float) become null in the page data, and the
// page is written.
func TestRunPageNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	st := &analyze.Stats{Count: 2, Sum: inf, Avg: inf, Std: nan, Min: 1, Max: inf, PosInf: 1}
	for i := range st.P {
		st.P[i] = inf
	}
	s := telemetryOnly()
	s.OfferedRate = inf
	s.ServerSeries = append(s.ServerSeries, analyze.ServerMetricSeries{Name: "server.requests_waiting", Unit: "requests", Kind: "gauge",
		T: []float64{0, 1, 2}, V: []float64{inf, -inf, nan}})
	s.ServerMetrics = append(s.ServerMetrics, analyze.ServerMetric{Name: "server.requests_waiting", Unit: "requests", Kind: "gauge",
		Present: true, Avg: nan, Min: -inf, Max: inf, P50: nan, P99: inf},
		analyze.ServerMetric{Name: "server.generation_tokens", Unit: "tokens/s", Kind: "counter", Present: true, Rate: inf})
	s.GPUs = []analyze.GPUSummary{{GPU: 0, Samples: 2, Power: st, Util: st, MemUsedGB: st, SMClock: st, Temp: st, EnergyJ: inf, HasEnergy: true}}
	p := BuildRun(RunInput{Summary: s})
	b, err := DataJSON(p)
	if err != nil {
		t.Fatalf("page data: %v", err)
	}
	if !json.Valid(b) || !bytes.Contains(b, []byte("null")) {
		t.Errorf("page data is not JSON with nulls:\n%s", b)
	}
	var out bytes.Buffer
	if err := WriteRun(&out, RunInput{Summary: s}); err != nil {
		t.Fatalf("WriteRun: %v", err)
	}
}

// The page data holds no bare float64: every number that comes from a run is a Number (or a
// chart column), which writes a value JSON cannot hold as null instead of failing.
func TestRunPageHasNoBareFloats(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(ty reflect.Type, path string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Float32, reflect.Float64:
			if ty != reflect.TypeFor[Number]() {
				t.Errorf("%s is a bare %s: make it a report.Number", path, ty)
			}
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			if ty == reflect.TypeFor[column]() {
				return // written by column.MarshalJSON, non-finite as null
			}
			walk(ty.Elem(), path+"[]")
		case reflect.Struct:
			if seen[ty] {
				return
			}
			seen[ty] = true
			for f := range ty.Fields() {
				if f.IsExported() {
					walk(f.Type, path+"."+f.Name)
				}
			}
		}
	}
	walk(reflect.TypeFor[RunPage](), "RunPage")
}
