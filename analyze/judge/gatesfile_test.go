package judge

import (
	"strings"
	"testing"
)

// TestParseGatesFile: a good file parses, with each gate's line; bad ones are refused with
// the file and the line.
func TestParseGatesFile(t *testing.T) {
	good := "version: 1\ngates:\n  - gate: time_to_first_token.p99<400\n    owner: serving\n    reason: chat SLO\n  - gate: \"request_throughput > 2\"\n    owner: capacity\n    reason: sizing\n"
	f, err := ParseGatesFile([]byte(good), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Gates) != 2 || f.Gates[0].Line != 3 || f.Gates[1].Line != 6 || f.Gates[1].Parsed.Metric.Tag != "request_throughput" {
		t.Fatalf("parsed %+v", f.Gates)
	}
	if _, ok := f.Agreed("request_throughput>2"); !ok {
		t.Error("Agreed should ignore spaces")
	}
	cases := []struct{ name, doc, want string }{
		{"unknown gate field", "version: 1\ngates:\n  - gate: request_count>1\n    ownr: x\n    reason: y\n", `g.yaml line 4: unknown field "ownr"`},
		{"unknown top field", "version: 1\nthresholds: []\n", `g.yaml line 2: unknown field "thresholds"`},
		{"no owner", "version: 1\ngates:\n  - gate: request_count>1\n    reason: y\n", "g.yaml line 3: gate \"request_count>1\" has no owner"},
		{"no reason", "version: 1\ngates:\n  - gate: request_count>1\n    owner: y\n", "has no reason"},
		{"bad gate", "version: 1\ngates:\n  - gate: nonsense.p99<1\n    owner: y\n    reason: z\n", "g.yaml line 3: --gate \"nonsense.p99<1\": unknown metric"},
		{"no version", "gates: []\n", "g.yaml line 1: no version"},
		{"other version", "version: 2\ngates: []\n", "g.yaml line 1: version 2 is not supported"},
		{"no gates", "version: 1\n", "no gates"},
		{"not yaml", "version: [1\n", "g.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGatesFile([]byte(c.doc), "g.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line containing %q", err, c.want)
			}
		})
	}
}

// FuzzParseGatesFile: any bytes give a gates file or an error naming the file, never a panic.
func FuzzParseGatesFile(f *testing.F) {
	f.Add([]byte("version: 1\ngates:\n  - gate: time_to_first_token.p99<400\n    owner: a\n    reason: b\n"))
	f.Add([]byte("version: 1\ngates:\n  - {gate: 'x<1', owner: 1, reason: [2]}\n"))
	f.Add([]byte("gates: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGatesFile(b, "fuzz.yaml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, x := range g.Gates {
			if x.Owner == "" || x.Reason == "" || x.Parsed.Metric.Tag == "" {
				t.Fatalf("accepted an incomplete gate %+v", x)
			}
		}
	})
}
