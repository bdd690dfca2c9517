package http1

import (
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/tracectx"
)

// TestSuffixTraceparent: the suffix carries the request's traceparent line when a key is
// set, none otherwise, and rendering it allocates nothing once the buffer has grown.
func TestSuffixTraceparent(t *testing.T) {
	var eb Buffers
	eb.Init(0)
	body := []byte(`{"x":1}`)
	eb.RenderSuffix(body, "X-Correlation-ID", 7, 3)
	if got := string(eb.Suffix()); got != "7\r\nX-Correlation-ID: 7\r\n\r\n" {
		t.Fatalf("suffix without a key %q", got)
	}
	eb.Trace = tracectx.NewKey("plan", 1, "")
	eb.RenderSuffix(body, "", 0, 3)
	want := "7\r\ntraceparent: " + string(eb.Trace.AppendTraceparent(nil, 3)) + "\r\n\r\n"
	if got := string(eb.Suffix()); got != want {
		t.Fatalf("suffix %q, want %q", got, want)
	}
	if !strings.HasPrefix(want[len("7\r\ntraceparent: "):], "00-") {
		t.Fatal(want)
	}
	i := uint32(0)
	if a := testing.AllocsPerRun(1000, func() { i++; eb.RenderSuffix(body, "X-Correlation-ID", i, i) }); a != 0 {
		t.Fatalf("%v allocations per suffix", a)
	}
}

// BenchmarkRenderSuffix is the per-request suffix with and without the traceparent.
func BenchmarkRenderSuffix(b *testing.B) {
	body := []byte(`{"x":1}`)
	for _, traced := range []bool{false, true} {
		name := "plain"
		if traced {
			name = "traceparent"
		}
		b.Run(name, func(b *testing.B) {
			var eb Buffers
			eb.Init(0)
			if traced {
				eb.Trace = tracectx.NewKey("plan", 1, "")
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				eb.RenderSuffix(body, "X-Correlation-ID", uint32(i), uint32(i))
			}
		})
	}
}
