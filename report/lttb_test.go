package report

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

func TestLTTB(t *testing.T) {
	const n = 1_000_000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), math.Sin(float64(i)/1000)
	}
	y[123456] = 50 // a spike LTTB must keep
	xs, ys := LTTB(x, y, 1000)
	if len(xs) != 1000 || len(ys) != 1000 {
		t.Fatalf("%d points, want 1000", len(xs))
	}
	if xs[0] != 0 || xs[len(xs)-1] != n-1 {
		t.Errorf("first %v last %v: the ends must stay", xs[0], xs[len(xs)-1])
	}
	spike := false
	for i := range xs {
		if i > 0 && xs[i] <= xs[i-1] {
			t.Fatalf("x not ascending at %d", i)
		}
		spike = spike || ys[i] == 50
	}
	if !spike {
		t.Error("the spike was dropped")
	}
	for _, tc := range []struct {
		in, n, want int
	}{{5, 10, 5}, {5, 2, 2}, {0, 10, 0}, {10, 3, 3}} {
		a, _ := LTTB(x[:tc.in], y[:tc.in], tc.n)
		if len(a) != tc.want {
			t.Errorf("LTTB(%d points, %d): %d points, want %d", tc.in, tc.n, len(a), tc.want)
		}
	}
	a, b := LTTB([]float64{1, 2, 3}, []float64{1, math.NaN(), 3}, 10)
	if len(a) != 2 || b[1] != 3 {
		t.Errorf("NaN not dropped: %v %v", a, b)
	}
}

// TestPageSizeBound: the page of a 1M-request run (synthetic records) stays under 5 MB:
// every chart is bounded by the downsampling, not by the request count.
func TestPageSizeBound(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 100_000 // the page's size does not depend on n; 1M takes ~5 s without -race
	}
	const start = int64(1_800_000_000_000_000_000)
	dur := int64(3600e9)
	s := &analyze.Summary{StartUnixNs: start, EndUnixNs: start + dur, RunDirs: []string{"synthetic"}}
	recs := &Records{Requests: make([]Request, n)}
	for i := range recs.Requests {
		q := &recs.Requests[i]
		at := start + int64(i)*(dur/int64(n))
		q.IntendedNs, q.SendNs, q.EndNs, q.OK = at, at+int64(i%7)*1000, at+int64(40e6)+int64(i%1000)*1e4, i%97 != 0
		if !q.OK {
			q.ErrKind = "http_500"
		}
		for f := range numFields {
			q.Values[f] = float32(10 + (i*7919)%1000)
		}
		q.Values[FOSLMismatchPct] = 0
	}
	var b bytes.Buffer
	if err := WriteRun(&b, RunInput{Summary: s, Records: recs}); err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("LLMBENCH_BIG_PAGE"); path != "" { // for TestBrowserPageFile
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() > 5<<20 {
		t.Errorf("page of %d requests is %d bytes, want under 5 MB", n, b.Len())
	}
	if !strings.Contains(b.String(), `"id":"request_latency_time"`) {
		t.Error("the latency timeline is missing")
	}
	t.Logf("%d requests: page %d bytes", n, b.Len())
}
