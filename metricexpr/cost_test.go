package metricexpr

import (
	"sync"
	"testing"
	"time"

	"github.com/google/cel-go/cel"

	"github.com/llmbench/llmbench/analyze"
)

// What evaluating an expression costs per request, measured on a live view (inside an
// evaluator, where the view is valid): allocations, and time in BenchmarkEval.

// costCases are expressions and the most allocations one evaluation may make: CEL boxes
// each double it computes (8 bytes), and the view's variables themselves add nothing.
var costCases = []struct {
	expr   string
	allocs float64
}{
	{"ttft_ms", 1},
	{"chunks_ms[2]", 2},
	{"double(osl - 1) / (latency_ms - ttft_ms) * 1000.0", 8},
	{"usage.prompt_tokens", 2},
	{"size(gaps_ms)", 2},
	{"time_to_second_token", 2},
}

// probe registers a metric that, on the first request with three content events and usage, runs f
// with the view; the analysis reads with one goroutine.
func probe(t testing.TB, f func(v *analyze.RequestView)) {
	t.Helper()
	dir := t.TempDir()
	writeFixture(t, dir, fixture(fixtureN))
	reg := analyze.NewRegistry()
	var once sync.Once
	if _, err := reg.Register(analyze.UserMetric{Name: "probe", Eval: func(v *analyze.RequestView) (float64, bool) {
		if v.ContentEvents() >= 3 && v.Usage().Has != 0 {
			once.Do(func() { f(v) })
		}
		return 0, false
	}}); err != nil {
		t.Fatal(err)
	}
	analyse(t, dir, reg, analyze.Options{Parallelism: 1})
}

func compiledFor(t testing.TB, expr string) *compiled {
	t.Helper()
	e, err := env(analyze.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile(e, "test", expr, cel.DoubleType, cel.IntType)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEvalAllocations(t *testing.T) {
	ran := false
	cs := make([]*compiled, len(costCases))
	for i, c := range costCases {
		cs[i] = compiledFor(t, c.expr)
	}
	probe(t, func(v *analyze.RequestView) {
		ran = true
		for i, c := range costCases {
			if _, ok := cs[i].number(v); !ok {
				t.Errorf("%s: no value", c.expr)
			}
			if n := testing.AllocsPerRun(100, func() { cs[i].number(v) }); n > c.allocs {
				t.Errorf("%s: %v allocations per evaluation; want at most %v", c.expr, n, c.allocs)
			}
		}
	})
	if !ran {
		t.Fatal("the probe never ran")
	}
}

// BenchmarkEval reports each expression's time per request (ns/op) and allocations.
func BenchmarkEval(b *testing.B) {
	for _, c := range costCases {
		cc := compiledFor(b, c.expr)
		b.Run(c.expr, func(b *testing.B) {
			probe(b, func(v *analyze.RequestView) {
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					cc.number(v)
				}
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/request")
			})
		})
	}
}
