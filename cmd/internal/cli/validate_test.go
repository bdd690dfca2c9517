package cli

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/replay"
)

// TestValidateExit: replay --validate exits 1 when its generator validation failed, though
// the run itself completed; a passed validation, a run that failed on its own and a replay
// without --validate keep the run's status.
func TestValidateExit(t *testing.T) {
	write := func(passed bool) string {
		dir := t.TempDir()
		g := &benchclaim.GeneratorValidation{FormatVersion: benchclaim.GeneratorValidationVersion, PlanHash: "ab", Passed: passed, Figures: map[string]float64{}}
		if err := benchclaim.WriteGeneratorValidation(filepath.Join(dir, benchclaim.GeneratorValidationName), g); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name     string
		enabled  bool
		dir      string
		code     int
		want     int
		stderrOK bool // stderr says why
	}{
		{"failed validation fails the run", true, write(false), 0, 1, true},
		{"passed validation", true, write(true), 0, 0, false},
		{"the run's own failure", true, write(false), 1, 1, false},
		{"bad input", true, write(false), 2, 2, false},
		{"no --validate", false, write(false), 0, 0, false},
		{"no file", true, t.TempDir(), 0, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := NewValidate("validate")
			if c.enabled {
				if err := v.FS.Set("validate", "true"); err != nil {
					t.Fatal(err)
				}
			}
			var stderr bytes.Buffer
			got := v.Exit(&replay.Options{OutputDir: c.dir}, c.code, &stderr)
			if got != c.want || (stderr.Len() > 0) != c.stderrOK {
				t.Errorf("exit %d, stderr %q; want %d (a line: %v)", got, stderr.String(), c.want, c.stderrOK)
			}
		})
	}
}
