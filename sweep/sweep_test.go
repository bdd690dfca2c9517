package sweep

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseLists(t *testing.T) {
	ints := []struct {
		in   string
		want []int
		err  string
	}{
		{"8", []int{8}, ""},
		{"1,2,4,8,16", []int{1, 2, 4, 8, 16}, ""},
		{" 4 , 2 ", []int{4, 2}, ""},
		{"1,,2", nil, "empty list item"},
		{"1,0", nil, `"0" is not a positive integer`},
		{"1,2.5", nil, `"2.5" is not a positive integer`},
		{"2,2", nil, "2 is listed twice"},
	}
	for _, c := range ints {
		got, err := ParseInts(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseInts(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseInts(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	floats := []struct {
		in   string
		want []float64
		err  string
	}{
		{"5,10,20", []float64{5, 10, 20}, ""},
		{"2.5", []float64{2.5}, ""},
		{"5,-1", nil, `"-1" is not a positive number`},
		{"inf", nil, "not a positive number"},
		{"NaN", nil, "not a positive number"},
		{"5,5.0", nil, "listed twice"},
	}
	for _, c := range floats {
		got, err := ParseFloats(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseFloats(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseFloats(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// ParseList reads an integer list as ParseInts does (its checks and words) and a number
// list as ParseFloats.
func TestParseList(t *testing.T) {
	for _, c := range []struct {
		in      string
		integer bool
		want    []float64
		err     string
	}{
		{"1,2,4", true, []float64{1, 2, 4}, ""},
		{"8", true, []float64{8}, ""},
		{"1,2.5", true, nil, `"2.5" is not a positive integer`},
		{"2,2", true, nil, "2 is listed twice"},
		{"2.5,5", false, []float64{2.5, 5}, ""},
		{"5,-1", false, nil, `"-1" is not a positive number`},
		{"1,,2", false, nil, "empty list item"},
	} {
		got, err := ParseList(c.in, c.integer)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseList(%q, %v) error %v, want %q", c.in, c.integer, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseList(%q, %v) = %v, %v; want %v", c.in, c.integer, got, err, c.want)
		}
	}
}

func TestPareto(t *testing.T) {
	// output tokens/s (max) vs output tokens/s/user (max), a typical sweep: throughput rises
	// while per-user speed falls; point 3 is dominated by point 2; point 4 is invalid.
	points := [][]float64{{100, 50}, {190, 48}, {350, 44}, {340, 40}, {900, 45}, {360, math.NaN()}, {350, 44}}
	ok := []bool{true, true, true, true, false, true, true}
	got := Pareto(points, []bool{true, true}, ok)
	if want := []int{0, 1, 2, 6}; !reflect.DeepEqual(got, want) { // equal points do not dominate each other
		t.Errorf("Pareto = %v, want %v", got, want)
	}
	// Throughput (max) vs TTFT p99 (min), AIPerf's docstring example.
	got = Pareto([][]float64{{100, 50}, {150, 80}, {140, 90}}, []bool{true, false}, nil)
	if want := []int{0, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Pareto(min) = %v, want %v", got, want)
	}
	if b := Best([]float64{3, 9, math.NaN(), 9, 12}, true, []bool{true, true, true, true, false}); b != 1 {
		t.Errorf("Best max = %d, want 1", b)
	}
	if b := Best([]float64{3, 1, 1}, false, nil); b != 1 {
		t.Errorf("Best min = %d, want 1", b)
	}
	if b := Best([]float64{math.NaN()}, false, nil); b != -1 {
		t.Errorf("Best none = %d", b)
	}
}

func TestParseSLA(t *testing.T) {
	cases := []struct {
		in, want, err string
	}{
		{"time_to_first_token:p95:le:200", "time_to_first_token.p95<=200", ""},
		{"request_throughput:avg:ge:10.5", "request_throughput.avg>=10.5", ""},
		{"inter_token_latency:p99:<:20", "inter_token_latency.p99<20", ""},
		{"x:p95:gt:1", "x.p95>1", ""},
		{"ttft:p95:eq:3", "", `operator "eq"`},
		{"ttft:p95:le", "", "want METRIC:STAT:OP:VALUE"},
		{"ttft:p95:le:fast", "", `threshold "fast"`},
		{":p95:le:3", "", "with a metric"},
	}
	for _, c := range cases {
		s, err := ParseSLA(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSLA(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || s.String() != c.want {
			t.Errorf("ParseSLA(%q) = %q, %v; want %q", c.in, s, err, c.want)
		}
	}
}

// server is a synthetic monotone server: a probe passes up to capacity.
func server(capacity float64, calls *[]float64) ProbeFunc {
	return func(x float64) (Outcome, float64, string) {
		*calls = append(*calls, x)
		if x <= capacity {
			return Pass, math.NaN(), ""
		}
		return Fail, math.NaN(), "time_to_first_token.p95<=25: 40"
	}
}

func TestMaxUnderSLA(t *testing.T) {
	cases := []struct {
		name     string
		o        SearchOptions
		capacity float64
		abortAt  float64
		probes   []float64
		found    bool
		boundary float64
		reason   string
	}{
		{"boundary 32", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.05}, 32, 0,
			[]float64{1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 34, 33}, true, 32, ReasonPrecision},
		{"boundary 45 within 5%", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.05}, 45, 0,
			[]float64{1, 2, 4, 8, 16, 32, 64, 48, 40, 44, 46}, true, 44, ReasonPrecision}, // (46-44)/46 < 5%
		{"boundary 45 within 1%", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.01}, 45, 0,
			[]float64{1, 2, 4, 8, 16, 32, 64, 48, 40, 44, 46, 45}, true, 45, ReasonPrecision},
		{"precision 25%", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.25}, 45, 0,
			[]float64{1, 2, 4, 8, 16, 32, 64, 48, 40}, true, 40, ReasonPrecision},
		{"max passes", SearchOptions{Min: 4, Max: 20, Integer: true, Precision: 0.05}, 100, 0,
			[]float64{4, 8, 16, 20}, true, 20, ReasonNoFailure},
		{"min fails", SearchOptions{Min: 4, Max: 20, Integer: true, Precision: 0.05}, 2, 0,
			[]float64{4}, false, 0, ReasonNoPass},
		{"client could not keep up", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.05}, 32, 16,
			[]float64{1, 2, 4, 8, 16}, false, 0, "client_schedule_not_kept"},
		{"iteration budget", SearchOptions{Min: 1, Max: 1024, Integer: true, Precision: 0.05, MaxIterations: 8}, 32, 0,
			[]float64{1, 2, 4, 8, 16, 32, 64, 48}, true, 32, ReasonMaxIterations},
		{"rate", SearchOptions{Min: 1, Max: 100, Precision: 0.05}, 12.5, 0,
			[]float64{1, 2, 4, 8, 16, 12, 14, 13, 12.5}, true, 12.5, ReasonPrecision},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls []float64
			probe := server(c.capacity, &calls)
			if c.abortAt > 0 {
				inner := probe
				probe = func(x float64) (Outcome, float64, string) {
					if x == c.abortAt {
						calls = append(calls, x)
						return Abort, math.NaN(), "client_schedule_not_kept"
					}
					return inner(x)
				}
			}
			r := MaxUnderSLA(c.o, probe)
			if !reflect.DeepEqual(calls, c.probes) || r.Found != c.found || r.Reason != c.reason || (c.found && r.Boundary != c.boundary) {
				t.Fatalf("probes %v found %v boundary %v reason %q\nwant   %v found %v boundary %v reason %q",
					calls, r.Found, r.Boundary, r.Reason, c.probes, c.found, c.boundary, c.reason)
			}
			if len(r.Probes) != len(calls) {
				t.Errorf("%d probes recorded, %d run", len(r.Probes), len(calls))
			}
		})
	}
}

func TestMaxObjective(t *testing.T) {
	// Goodput rises linearly to a peak at 24 and falls after it.
	goodput := func(x float64) float64 { return 100 - math.Abs(x-24)*3 }
	var calls []float64
	r := MaxObjective(SearchOptions{Min: 1, Max: 256, Integer: true, Precision: 0.05}, func(x float64) (Outcome, float64, string) {
		calls = append(calls, x)
		return Pass, goodput(x), ""
	})
	if !r.Found || r.Boundary != 24 || r.Reason != ReasonGoodputPeak {
		t.Fatalf("boundary %v found %v reason %q probes %v", r.Boundary, r.Found, r.Reason, calls)
	}
	if want := []float64{1, 2, 4, 8, 16, 32, 12, 24, 20, 28, 22, 26, 23, 25}; !reflect.DeepEqual(calls, want) {
		t.Errorf("probes %v, want %v", calls, want)
	}
	// Still rising at the maximum.
	r = MaxObjective(SearchOptions{Min: 1, Max: 10, Integer: true, Precision: 0.05}, func(x float64) (Outcome, float64, string) { return Pass, x, "" })
	if !r.Found || r.Boundary != 10 || r.Reason != ReasonGoodputAtMax {
		t.Errorf("at max: %+v", r)
	}
}

func TestSearchOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o   SearchOptions
		err string
	}{
		{SearchOptions{Min: 0, Max: 4, Precision: 0.05}, "--search-min 0"},
		{SearchOptions{Min: 8, Max: 4, Precision: 0.05}, "--search-max 4: must be at least"},
		{SearchOptions{Min: 1, Max: 4, Precision: 1}, "--search-precision 1"},
		{SearchOptions{Min: 1.2, Max: 1.8, Precision: 0.05, Integer: true}, "no whole number"},
		{SearchOptions{Min: 1, Max: 4, Precision: 0.05}, ""},
	} {
		err := c.o.Check()
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Check(%+v) = %v, want %q", c.o, err, c.err)
		}
	}
}

// FuzzParse: the list and SLA parsers never panic, and what they accept is well formed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1,2,4", "5.5,10", " 3 ", ",", "time_to_first_token:p95:le:200", "a:b:<=:1e9", "x:y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseInts(s); err == nil {
			for _, x := range v {
				if x <= 0 {
					t.Fatalf("ParseInts(%q) accepted %d", s, x)
				}
			}
		}
		if v, err := ParseFloats(s); err == nil {
			for _, x := range v {
				if !(x > 0) || math.IsInf(x, 0) {
					t.Fatalf("ParseFloats(%q) accepted %v", s, x)
				}
			}
		}
		if sla, err := ParseSLA(s); err == nil && (sla.Metric == "" || sla.Stat == "" || slaOps[sla.Op] != sla.Op) {
			t.Fatalf("ParseSLA(%q) = %+v", s, sla)
		}
	})
}
