package metricexpr

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
)

// TestParseMetricsFile: a metrics file's metrics with where each was given; each defect is
// one line naming the file and the line.
func TestParseMetricsFile(t *testing.T) {
	good := "version: 1\nmetrics:\n  - name: third_event_ms\n    expression: chunks_ms[2]\n    unit: ms\n    description: the third content event\n  - name: decode_ms\n    expression: latency_ms - ttft_ms\n    larger_is_better: false\n"
	specs, err := ParseMetricsFile([]byte(good), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[0].Name != "third_event_ms" || specs[0].Expression != "chunks_ms[2]" || specs[0].Unit != "ms" ||
		specs[0].From != "--metrics-file m.yaml line 3: metric third_event_ms" || specs[1].From != "--metrics-file m.yaml line 7: metric decode_ms" {
		t.Fatalf("%+v", specs)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"no version", "metrics:\n  - name: a\n    expression: ttft_ms\n", "--metrics-file m.yaml line 1: no version"},
		{"other version", "version: 2\nmetrics: []\n", "m.yaml line 1: version 2 is not supported"},
		{"no metrics", "version: 1\n", "m.yaml: no metrics"},
		{"unknown field", "version: 1\nmetrics:\n  - name: a\n    expresion: ttft_ms\n", `m.yaml line 4: unknown field "expresion"`},
		{"no expression", "version: 1\nmetrics:\n  - name: a\n", "m.yaml line 3: metric a has no expression"},
		{"no name", "version: 1\nmetrics:\n  - expression: ttft_ms\n", "metric 1 has no name"},
		{"bad name", "version: 1\nmetrics:\n  - name: Third\n    expression: ttft_ms\n", `m.yaml line 3: metric name "Third"`},
		{"not yaml", "version: [\n", "--metrics-file m.yaml:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMetricsFile([]byte(c.doc), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line saying %q", err, c.want)
			}
		})
	}
}

func TestParseMetricFlag(t *testing.T) {
	s, err := ParseMetricFlag(" third_event_ms = chunks_ms[2] == 1.0 ")
	if err != nil || s.Name != "third_event_ms" || s.Expression != "chunks_ms[2] == 1.0" || s.From != "--metric third_event_ms" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{"", "x", "= ttft_ms", "x =", "x == 2", "Bad = 1", "9x = 1", "server = 1"} {
		if _, err := ParseMetricFlag(bad); err == nil || !strings.HasPrefix(err.Error(), "--metric ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzParseMetricsFile: any bytes as a metrics file give metrics with a valid name and an
// expression each, or one line naming the file.
func FuzzParseMetricsFile(f *testing.F) {
	f.Add([]byte("version: 1\nmetrics:\n  - name: a_ms\n    expression: ttft_ms\n    unit: ms\n"))
	f.Add([]byte("version: 1\nmetrics:\n  - name: a\n    expression: x\n  - name: b\n    expression: y\n    failed_requests: true\n"))
	f.Add([]byte("version: 2\n"))
	f.Add([]byte("{\"version\": 1, \"metrics\": [{\"name\": \"a\", \"expression\": \"1\"}]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		specs, err := ParseMetricsFile(b, "f.yaml")
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "--metrics-file f.yaml") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		for _, s := range specs {
			if analyze.CheckMetricName(s.Name) != nil || s.Expression == "" || !strings.HasPrefix(s.From, "--metrics-file f.yaml line ") {
				t.Fatalf("%+v", s)
			}
		}
	})
}
