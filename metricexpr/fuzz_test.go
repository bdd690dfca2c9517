package metricexpr

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// FuzzExpressions: any text given as a user metric, a --where or a --group-by either
// compiles or is one line naming the metric or the flag; what compiles evaluates over a
// small run without a panic, a hang (the cost bound) or an error.
func FuzzExpressions(f *testing.F) {
	for _, s := range []string{"chunks_ms[2]", "ttft_ms", "latency_ms - ttft_ms", "gaps_ms.all(g, g < 10.0)", "isl > 4096",
		"usage.prompt_tokens", "usage[?'reasoning_tokens'].orValue(0)", "chunks_ms[?5].orValue(0.0)", "math.greatest(gaps_ms)",
		"size(reads) > 0 ? reads[0] : 0", `error == "" && status == 200`, "turn", "string(session) + '/' + string(turn)",
		"chunks_ms.map(a, chunks_ms.map(b, a - b))", "[1,2,3].map(x, [1,2,3].map(y, x * y))", "1 / 0", "double(osl) / 0.0",
		"chunks_ms[", "'\\u", "((((((", "tfft_ms"} {
		f.Add(s)
	}
	dir := f.TempDir()
	writeFixture(f, dir, fixture(6))
	f.Fuzz(func(t *testing.T, expr string) {
		reg := analyze.NewRegistry()
		oneLine := func(err error, what string) {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, what) {
				t.Fatalf("%q: error %q is not one line starting %q", expr, msg, what)
			}
		}
		opts := analyze.Options{Parallelism: 1}
		if err := Register(reg, []MetricSpec{{Name: "m", Expression: expr}}); err != nil {
			oneLine(err, "metric m")
		}
		if w, err := Where(reg, expr); err != nil {
			oneLine(err, "--where")
		} else {
			opts.Where = w
		}
		if g, err := GroupBy(reg, expr); err != nil {
			oneLine(err, "--group-by")
		} else {
			opts.GroupBy = g
		}
		o := opts
		o.RunDirs = []string{filepath.Join(dir, "run")}
		o.Metrics, o.Tokenizer, o.TempDir = reg, wordCounter{}, t.TempDir()
		if _, err := analyze.Analyze(o, io.Discard); err != nil {
			// Only a selection of no request may refuse the analysis.
			if o.Where == nil || !strings.HasPrefix(err.Error(), "analyze: --where ") || !strings.Contains(err.Error(), "selects none") {
				t.Fatalf("%q: %v", expr, err)
			}
		}
	})
}

// TestCostBound: an expression too costly to evaluate (a comprehension nested over lists)
// stops at the cost bound and gives no value, counted as skipped, instead of running for
// hours; a cheap one keeps its value.
func TestCostBound(t *testing.T) {
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	deep := "size(" + ten + ".map(a, " + ten + ".map(b, " + ten + ".map(c, " + ten + ".map(d, " + ten + ".map(e, " + ten + ".map(f, " + ten + ".map(g, a+b+c+d+e+f+g))))))))"
	dir := t.TempDir()
	writeFixture(t, dir, fixture(4))
	reg := analyze.NewRegistry()
	if err := Register(reg, []MetricSpec{{Name: "deep", Expression: deep}, {Name: "cheap", Expression: "size(" + ten + ".map(a, " + ten + ".map(b, a+b)))"}}); err != nil {
		t.Fatal(err)
	}
	s, _ := analyse(t, dir, reg, analyze.Options{})
	if d, ok := s.Result("deep"); ok && d.Stats != nil && d.Stats.Count != 0 {
		t.Errorf("deep: %+v, want no value", d)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "metric deep: 3 of 3 requests had no value") {
		t.Errorf("no note says deep was skipped: %q", s.Notes)
	}
	c, ok := s.Result("cheap")
	if !ok || c.Stats == nil || c.Stats.Count == 0 || c.Stats.Avg != 10 || c.Skipped != 0 {
		t.Errorf("cheap: %+v, want 10 for every valid request", c)
	}
}
