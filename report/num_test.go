package report

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/numfmt"
)

// TestPageNumMatchesNumfmt: the pages' num (page.js, between "num:begin" and "num:end") writes
// every value as numfmt.Format does, so a number reads the same on a page, in a comparison
// line and in a finding. It runs the function under node; outside CI it skips without node.
func TestPageNumMatchesNumfmt(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must check page.js's num against numfmt (.ci/run installs node)")
		}
		t.Skip("node not found: page.js's num not checked")
	}
	_, body, ok := strings.Cut(pageJS, "// num:begin")
	if ok {
		body, _, ok = strings.Cut(body, "// num:end")
	}
	if !ok {
		t.Fatal("page.js: no num:begin … num:end block")
	}
	values := []float64{0, 1, -1, 1.5, 12.3456, 123.456, 1234.56, 12345.678, -12345.678, 1e15, 1e20, 1e22, 0.097, -1.373e-4,
		-1.373e-3, 6.1e-9, 1e-13, 0.5, 999.94, 999.96, 99.996, 0.0123456, 42, 17.75, 11.21, 1000, 0.001, 2.5e-7,
		math.NaN(), math.Inf(1), math.Inf(-1), 3.14159, 200, 0.1, 0.2, 0.3, 65536, 1.0000001}
	// JSON has no NaN or Inf: they go as strings and are turned back into numbers.
	in := make([]any, len(values))
	for i, v := range values {
		switch {
		case math.IsNaN(v):
			in[i] = "NaN"
		case math.IsInf(v, 1):
			in[i] = "Infinity"
		case math.IsInf(v, -1):
			in[i] = "-Infinity"
		default:
			in[i] = v
		}
	}
	arg, _ := json.Marshal(in)
	script := body + "\nprocess.stdout.write(JSON.stringify(" + string(arg) + ".map(function (v) { return num(typeof v === 'string' ? Number(v) : v); })));\n"
	out, err := exec.Command(node, "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(values) {
		t.Fatalf("node printed %q: %v", out, err)
	}
	for i, v := range values {
		if want := numfmt.Format(v); got[i] != want {
			t.Errorf("num(%v) = %q on the page, numfmt.Format = %q", v, got[i], want)
		}
	}
	// null and undefined, a value the data does not have, are absent too.
	out, err = exec.Command(node, "-e", body+"\nprocess.stdout.write(num(null) + '|' + num(undefined));").CombinedOutput()
	if err != nil || string(out) != numfmt.Absent+"|"+numfmt.Absent {
		t.Errorf("num(null), num(undefined) = %q (%v), want %s", out, err, numfmt.Absent)
	}
}
