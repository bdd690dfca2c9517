package report

import (
	"math"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// TestServerRowsAbsentIsNull: a statistic a server metric's kind does not have is null in
// the page data (the page shows "–"), never 0: a counter has a rate only, a gauge no rate, a
// histogram no min or max, a ratio an average only.
func TestServerRowsAbsentIsNull(t *testing.T) {
	s := &analyze.Summary{ServerMetrics: []analyze.ServerMetric{
		{Name: "server.c", Kind: "counter", Rate: 3, Present: true},
		{Name: "server.g", Kind: "gauge", Avg: 1, Min: 0, Max: 2, P50: 1, P99: 2, Present: true},
		{Name: "server.h", Kind: "histogram", Avg: 5, P50: 4, P99: 9, Present: true},
		{Name: "server.r", Kind: "ratio", Avg: 0.5, Present: true},
	}}
	rows, _ := serverRows(s)
	want := map[string][6]bool{ // avg, min, max, p50, p99, rate: has a value
		"server.c": {false, false, false, false, false, true},
		"server.g": {true, true, true, true, true, false},
		"server.h": {true, false, false, true, true, false},
		"server.r": {true, false, false, false, false, false},
	}
	for _, r := range rows {
		got := [6]bool{}
		for i, v := range []Number{r.Avg, r.Min, r.Max, r.P50, r.P99, r.Rate} {
			got[i] = !math.IsNaN(float64(v))
		}
		if got != want[r.Name] {
			t.Errorf("%s (%s): has avg, min, max, p50, p99, rate = %v, want %v", r.Name, r.Kind, got, want[r.Name])
		}
	}
	// The gauge's min of 0 is a value, and stays one.
	if rows[1].Min != 0 {
		t.Errorf("gauge min = %v, want 0", rows[1].Min)
	}
}

// TestRateBins: the tokens/s chart's bins are readable for the run's length: 1 s bins up to
// two minutes, 60 to 120 bins beyond, never a sub-second comb of a multi-second run; each bin
// divided by the time it covers, the raw series one click away.
func TestRateBins(t *testing.T) {
	for _, c := range []struct {
		d       float64
		width   float64
		minBins int
		maxBins int
	}{
		{0.5, 0.025, 20, 20}, {1.9, 0.095, 20, 20}, {2, 1, 2, 2}, {17.75, 1, 18, 18}, {19.4, 1, 20, 20}, {60, 1, 60, 60},
		{120, 1, 120, 120}, {121, 2, 60, 61}, {600, 5, 120, 120}, {3600, 30, 120, 120}, {7261, 61, 60, 120}, {86400, 900, 96, 96},
		{30 * 86400, 21600, 60, 120},
	} {
		w := rateBinWidth(c.d)
		n := int(math.Ceil(c.d/w - 1e-9))
		if c.d >= 2 && w < 1 {
			t.Errorf("%g s run: %g s bins, want at least 1 s", c.d, w)
		}
		if c.width != 61 && c.width != 21600 && math.Abs(w-c.width) > 1e-9 {
			t.Errorf("%g s run: %g s bins, want %g s", c.d, w, c.width)
		}
		if n < c.minBins || n > c.maxBins {
			t.Errorf("%g s run: %d bins of %g s, want %d to %d", c.d, n, w, c.minBins, c.maxBins)
		}
	}
	// 17.75 s, 9 requests of 100 tokens completing every 1.7 s: every bin a request
	// ends in reads 100 tokens/s, the last bin (0.75 s) divided by its own length.
	var tt, tn []float64
	for i := 1; i <= 9; i++ {
		tt, tn = append(tt, float64(i)*1.7), append(tn, 100)
	}
	tt, tn = append(tt, 17.5), append(tn, 75)
	c := tokensChart(17.75, tt, tn)
	if len(c.Data[0]) != 18 || c.Data[0][0] != 0.5 || c.Data[0][17] != 17.375 {
		t.Fatalf("bins at %v", c.Data[0])
	}
	if got := c.Data[1][17]; math.Abs(got-100) > 1e-9 {
		t.Errorf("last bin (0.75 s, 75 tokens) = %g tokens/s, want 100", got)
	}
	if got := c.Data[1][1]; got != 100 {
		t.Errorf("bin 1 s–2 s (one request of 100 tokens) = %g tokens/s, want 100", got)
	}
	if c.Raw == nil || len(c.Raw.Data) != 2 || len(c.Raw.Data[0]) != 10 || c.Raw.Data[1][9] != 75 {
		t.Errorf("raw series: %+v", c.Raw)
	}
}

// TestRowNoteSameRead: a Time to Second Token whose minimum is 0 ms because events arrived in
// one read says so beside the figure; a real minimum, or no same-read gaps, says nothing.
func TestRowNoteSameRead(t *testing.T) {
	ttst, _ := analyze.LookupMetric("time_to_second_token")
	pct, _ := analyze.LookupMetric("same_read_chunk_gap_pct")
	mk := func(min, share float64) *analyze.Summary {
		return &analyze.Summary{Results: []analyze.Result{{MetricDef: ttst, Stats: &analyze.Stats{Count: 10, Min: min}}, {MetricDef: pct, Value: share}}}
	}
	for _, c := range []struct {
		name       string
		s          *analyze.Summary
		tag        string
		wantPrefix string
	}{
		{"min 0 from same-read gaps", mk(0, 7.5), "time_to_second_token", "min 0 ms: 7.5 % of the gaps"},
		{"a real minimum", mk(0.4, 7.5), "time_to_second_token", ""},
		{"no same-read gaps", mk(0, 0), "time_to_second_token", ""},
		{"another metric", mk(0, 7.5), "time_to_first_token", ""},
	} {
		got := rowNote(c.s, c.tag)
		if c.wantPrefix == "" && got != "" || c.wantPrefix != "" && !strings.HasPrefix(got, c.wantPrefix) {
			t.Errorf("%s: note %q, want %q…", c.name, got, c.wantPrefix)
		}
	}
}
