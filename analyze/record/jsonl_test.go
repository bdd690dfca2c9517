package record

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAppendJSONL: each column is written as its flags say (integer, ns shown in ms, divided,
// failed requests too, the inter-chunk list), the metadata as the options say, and the
// line is one JSON object.
func TestAppendJSONL(t *testing.T) {
	cols := []Column{NewColumn(0, "ttft", "ms"), NewColumn(1, "osl", "tokens"), NewColumn(2, "rate", "tokens/sec"), NewColumn(3, "isl", "tokens"), NewColumn(4, "icl", "ms")}
	cols[0].NsToMs, cols[0].Div = true, 1e6
	cols[1].Int = true
	cols[2].Div = 2
	cols[3].Int, cols[3].Failed = true, true
	cols[4].List = ListICL
	metrics := func(valid bool) *Metrics {
		m := &Metrics{Index: 7, Session: 3, Turn: 1, Worker: 2, StartUnixNs: 1000, IntendedNs: 10, SendNs: 20, HeaderNs: 30, EndNs: 40,
			Valid: valid, Sent: true, Status: 200, Values: []float64{1_500_000, 7, 5, 12, 0}, Has: []bool{true, true, true, true, false},
			ICL: []int64{2_000_000, 250_000}}
		if !valid {
			m.Err = &Error{Kind: "http_500", Code: 500, Message: "boom"}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		m     *Metrics
		o     Options
		want  []string
		never []string
	}{
		{"valid", metrics(true), Options{Columns: cols},
			[]string{`"x_correlation_id":null`, `"worker_id":"worker_002"`, `"credit_issued_ns":1010`, `"request_end_ns":1040`, `"request_index":7`,
				`"ttft":{"value":1.5,"unit":"ms"}`, `"osl":{"value":7,"unit":"tokens"}`, `"rate":{"value":2.5,"unit":"tokens/sec"}`,
				`"isl":{"value":12,"unit":"tokens"}`, `"icl":{"value":[2.0,0.25],"unit":"ms"}`, `"error":null`},
			[]string{`"group"`, `"trace_data"`}},
		{"failed", metrics(false), Options{Columns: cols, Correlated: true, Grouped: true},
			[]string{`"x_correlation_id":"3"`, `"group":null`, `"metrics":{"isl":{"value":12,"unit":"tokens"}}`, `"error":{"code":500,"type":"http_500","message":"boom"}`},
			[]string{`"ttft"`, `"icl"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			line := AppendJSONL(nil, c.m, nil, &c.o)
			if !json.Valid(line) || !strings.HasSuffix(string(line), "}\n") {
				t.Fatalf("not one JSON line: %s", line)
			}
			for _, w := range c.want {
				if !strings.Contains(string(line), w) {
					t.Errorf("no %s in %s", w, line)
				}
			}
			for _, w := range c.never {
				if strings.Contains(string(line), w) {
					t.Errorf("%s in %s", w, line)
				}
			}
		})
	}
}

// AppendJSONL is on analyze's per-request path: into a buffer that has the room, a line
// allocates nothing.
func TestAppendJSONLNoAllocs(t *testing.T) {
	cols := []Column{NewColumn(0, "ttft", "ms"), NewColumn(1, "icl", "ms")}
	cols[0].NsToMs, cols[0].Div = true, 1e6
	cols[1].List = ListICL
	m := &Metrics{Index: 1, Worker: 0, Valid: true, Sent: true, Values: []float64{1_500_000, 0}, Has: []bool{true, false},
		ICL: []int64{2_000_000, 250_000}, Group: "g", Grouped: true}
	o := &Options{Columns: cols, Correlated: true, Grouped: true}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = AppendJSONL(buf[:0], m, nil, o) }); n != 0 {
		t.Errorf("%v allocations per line", n)
	}
}
