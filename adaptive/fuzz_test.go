package adaptive

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSLA: any --adaptive-scale-sla value gives an SLA that String writes back to itself,
// or a one-line error naming the value; never a panic.
func FuzzParseSLA(f *testing.F) {
	for _, s := range []string{"ttft:p95:le:120", "request_latency:p99:<=:3e4", "goodput:avg:ge:20", "a:b:c", "::::", "x:y:gt:NaN", "x:y:lt:-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sla, err := ParseSLA(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("error of two lines: %v", err)
			}
			return
		}
		if math.IsNaN(sla.Threshold) || math.IsInf(sla.Threshold, 0) || sla.Spelling != sla.Metric+":"+sla.Stat {
			t.Fatalf("%q: %+v", s, sla)
		}
		back, err := ParseSLA(sla.String())
		if err != nil || back != sla {
			t.Fatalf("%q: %+v written %q read back %+v, %v", s, sla, sla.String(), back, err)
		}
	})
}

// FuzzReadSummary: any bytes in adaptive_scale_summary.json give a summary of this schema
// version or an error naming the file; never a panic.
func FuzzReadSummary(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"status":"complete","slas":["ttft:p95:le:120"],"candidates":[{"value":4,"windows":2}]}`))
	f.Add([]byte(`{"schema_version":2}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), SummaryFile)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSummary(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if s.SchemaVersion != SchemaVersion {
			t.Fatalf("schema_version %d read", s.SchemaVersion)
		}
	})
}
