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

// TestTQuantile checks the t quantile against closed forms (df 1, 2 and 4 have them) and
// against published values of scipy.stats.t.ppf.
func TestTQuantile(t *testing.T) {
	df1 := func(p float64) float64 { return math.Tan(math.Pi * (p - 0.5)) }
	df2 := func(p float64) float64 { return (2*p - 1) / math.Sqrt(2*p*(1-p)) }
	df4 := func(p float64) float64 {
		a := 4 * p * (1 - p)
		q := math.Cos(math.Acos(math.Sqrt(a))/3) / math.Sqrt(a)
		return math.Copysign(2*math.Sqrt(q-1), p-0.5)
	}
	cases := []struct {
		p, df, want float64
		tol         float64 // relative
	}{
		{0.975, 1, df1(0.975), 1e-12},
		{0.995, 1, df1(0.995), 1e-12},
		{0.9995, 1, df1(0.9995), 1e-12},
		{0.025, 1, df1(0.025), 1e-12},
		{0.975, 2, df2(0.975), 1e-12},
		{0.95, 2, df2(0.95), 1e-12},
		{0.6, 2, df2(0.6), 1e-12},
		{0.975, 4, df4(0.975), 1e-12},
		{0.995, 4, df4(0.995), 1e-12},
		{0.1, 4, df4(0.1), 1e-12},
		// scipy.stats.t.ppf
		{0.975, 1, 12.706204736174707, 1e-12},
		{0.975, 4, 2.7764451051977934, 1e-12},
		{0.975, 9, 2.2621571627409915, 1e-9},
		{0.95, 10, 1.8124611228107335, 1e-9},
		{0.975, 30, 2.0422724563012373, 1e-9},
		{0.995, 4, 4.604094871415897, 1e-9},
		{0.975, 1e9, 1.959963984540054, 1e-6}, // the normal quantile, the limit (lgamma differences cost digits at huge df)
		{0.5, 3, 0, 0},
	}
	for _, c := range cases {
		got := TQuantile(c.p, c.df)
		if d := math.Abs(got - c.want); d > c.tol*math.Abs(c.want) {
			t.Errorf("TQuantile(%v, %v) = %.17g, want %.17g (relative error %.2g)", c.p, c.df, got, c.want, d/math.Abs(c.want))
		}
	}
	// df 3 has a closed-form CDF: the quantile must invert it.
	cdf3 := func(x float64) float64 {
		u := x / math.Sqrt(3)
		return 0.5 + (u/(1+u*u)+math.Atan(u))/math.Pi
	}
	for _, p := range []float64{0.55, 0.9, 0.975, 0.999} {
		if got := cdf3(TQuantile(p, 3)); math.Abs(got-p) > 1e-13 {
			t.Errorf("CDF3(TQuantile(%v, 3)) = %.17g", p, got)
		}
	}
	for _, bad := range [][2]float64{{0, 3}, {1, 3}, {0.9, 0}, {math.NaN(), 3}} {
		if got := TQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 10, 12, 14, 16, 18: mean 14, sample variance 10, std √10, SE √2, t(0.975, 4).
	c := Summarize([]float64{10, 12, 14, 16, 18, math.NaN()}, 0.95)
	tc := TQuantile(0.975, 4)
	want := Confidence{N: 5, Mean: 14, Std: math.Sqrt(10), Min: 10, Max: 18, CV: math.Sqrt(10) / 14, SE: math.Sqrt2,
		CILow: 14 - tc*math.Sqrt2, CIHigh: 14 + tc*math.Sqrt2, TCritical: tc}
	if !close(c, want) {
		t.Errorf("Summarize = %+v\nwant        %+v", c, want)
	}
	if w := c.RelativeCIWidth(); math.Abs(w-2*tc*math.Sqrt2/14) > 1e-12 {
		t.Errorf("RelativeCIWidth = %v", w)
	}
	one := Summarize([]float64{7}, 0.95)
	if one.Mean != 7 || one.Std != 0 || one.CILow != 7 || one.CIHigh != 7 || !math.IsNaN(one.TCritical) {
		t.Errorf("one value: %+v", one)
	}
	if none := Summarize(nil, 0.95); none.N != 0 || !math.IsNaN(none.Mean) {
		t.Errorf("no value: %+v", none)
	}
}

func close(a, b Confidence) bool {
	av := []float64{a.Mean, a.Std, a.Min, a.Max, a.CV, a.SE, a.CILow, a.CIHigh, a.TCritical}
	bv := []float64{b.Mean, b.Std, b.Min, b.Max, b.CV, b.SE, b.CILow, b.CIHigh, b.TCritical}
	for i := range av {
		if math.Abs(av[i]-bv[i]) > 1e-12*math.Max(1, math.Abs(bv[i])) {
			return false
		}
	}
	return a.N == b.N
}

func TestConverged(t *testing.T) {
	c := Summarize([]float64{100, 101, 99}, 0.95) // std 1, CV 0.01, CI width 2·4.3027/√3 ≈ 4.968 → 0.04968
	cases := []struct {
		mode      string
		threshold float64
		want      bool
		value     float64
	}{
		{ModeCV, 0.05, true, 0.01},
		{ModeCV, 0.005, false, 0.01},
		{ModeCIWidth, 0.10, true, 2 * TQuantile(0.975, 2) / math.Sqrt(3) / 100},
		{ModeCIWidth, 0.04, false, 2 * TQuantile(0.975, 2) / math.Sqrt(3) / 100},
	}
	for _, k := range cases {
		ok, v, err := Converged(c, k.mode, k.threshold)
		if err != nil || ok != k.want || math.Abs(v-k.value) > 1e-12 {
			t.Errorf("Converged(%s, %v) = %v, %v, %v; want %v, %v", k.mode, k.threshold, ok, v, err, k.want, k.value)
		}
	}
	if ok, _, _ := Converged(Summarize([]float64{5}, 0.95), ModeCV, 1); ok {
		t.Error("one run converged")
	}
	if _, _, err := Converged(c, "distribution", 0.1); err == nil {
		t.Error("distribution mode accepted")
	}
	if DefaultThreshold(ModeCV) != 0.05 || DefaultThreshold(ModeCIWidth) != 0.10 || MinRunsForConvergence(2) != 2 || MinRunsForConvergence(10) != 3 {
		t.Error("defaults")
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
