package plan

import (
	"bytes"
	"strings"
	"testing"
)

// TestInspectFirstLines: the first 16 lines of `plan inspect` (what scripts/demo.sh shows)
// give the identity, model, endpoint, load, request counts, bodies and ISL/OSL, and never a
// Poisson arrival spec on a closed-loop plan (whose spec records --arrival-pattern at its
// default).
func TestInspectFirstLines(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *Options)
		want    []string
		notWant []string
	}{
		{"closed loop", func(o *Options) { o.Concurrency, o.RequestCount, o.WarmupRequestCount = 8, 64, 4 },
			[]string{"hash ", "model ", "endpoint ", "load closed loop, concurrency 8", "requests ", "68 (4 warmup, 64 profile)", "bodies 68 distinct, none repeated", "ISL ", "OSL "},
			[]string{"poisson", "arrival"}},
		{"poisson", func(o *Options) { o.RequestRate, o.RequestCount, o.ArrivalPattern = 10, 200, "poisson" },
			[]string{"load request rate 10 req/s (poisson arrivals)", "bodies 200 distinct", "offered rate ", "nominal 10.000 req/s", "199 gaps over"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.NumDatasetEntries = 0
			o.Spec = map[string]any{"arrival-pattern": "poisson", "arrival-smoothness": 1.0, "concurrency": o.Concurrency}
			tt.set(&o)
			p, _ := compileOpen(t, o)
			s, err := Summarize(p, 0)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := s.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(b.String(), "\n", 17)
			head := strings.Join(lines[:min(16, len(lines))], "\n")
			flat := strings.Join(strings.Fields(head), " ") // column widths aside
			for _, w := range tt.want {
				if !strings.Contains(flat, w) {
					t.Errorf("the first 16 lines lack %q:\n%s", w, head)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("inspect says %q:\n%s", w, b.String())
				}
			}
		})
	}
}
