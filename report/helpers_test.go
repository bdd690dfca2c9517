package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/tokenizer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureRuns holds the runs made by testdata/mkfixtures.sh against mockllm.
const fixtureRuns = "testdata/runs"

// fixturePlans names each fixture run's plan.
var fixturePlans = map[string]string{"rate-a": "rate.llmplan", "rate-a2": "rate.llmplan", "rate-b": "rate.llmplan",
	"conc-1": "conc-1.llmplan", "conc-2": "conc-2.llmplan", "conc-4": "conc-4.llmplan"}

// analyseFixture analyses one fixture run as `analyze` does and collects its records.
func analyseFixture(t testing.TB, name string, slice time.Duration) Run {
	t.Helper()
	tok, err := tokenizer.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	recs := &Records{}
	s, err := analyze.Analyze(analyze.Options{RunDirs: []string{filepath.Join(fixtureRuns, name)},
		PlanPath: filepath.Join(fixtureRuns, fixturePlans[name]), Tokenizer: tok, TempDir: t.TempDir(),
		SliceDuration: slice, MaxScheduleLag: time.Millisecond, MaxWorkerCPU: 0.9}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Close(); err != nil {
		t.Fatal(err)
	}
	return Run{Name: name, Summary: s, Records: recs}
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test ./report -run %s -update to accept):\n%s", path, t.Name(), firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := splitLines(a), splitLines(b)
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n want " + x + "\n  got " + y
		}
	}
	return ""
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
