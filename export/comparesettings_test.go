package export

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// CompareSettings.Options refuses each bad flag by name, in the command line's order, and
// expands a folder of runs; CompareDirs counts the runs it found.
func TestCompareSettingsOptions(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{"b", "a", "c"} {
		if err := os.MkdirAll(filepath.Join(dir, r), 0o755); err != nil {
			t.Fatal(err)
		}
		if r != "c" { // c holds no run.json: not a run
			if err := os.WriteFile(filepath.Join(dir, r, "run.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ok := CompareSettings{Alpha: 0.05, MinEffectPct: 5, MaxErrorRate: 0, MaxCompletedDropPct: 10}
	with := func(f func(*CompareSettings)) CompareSettings { s := ok; f(&s); return s }
	for _, c := range []struct {
		name string
		s    CompareSettings
		args []string
		dirs []string
		err  string
	}{
		{"two runs", ok, []string{"x", "y"}, []string{"x", "y"}, ""},
		{"folder of runs", ok, []string{dir}, []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, ""},
		{"one run", ok, []string{filepath.Join(dir, "a")}, nil, "want at least two run directories, got 1 (" + CompareUsage + ")"},
		{"missing folder", ok, []string{filepath.Join(dir, "none")}, nil, filepath.Join(dir, "none") + ": open"},
		{"alpha 1", with(func(s *CompareSettings) { s.Alpha = 1 }), []string{"x", "y"}, nil, "--alpha 1: want a level between 0 and 1"},
		{"alpha before effect", with(func(s *CompareSettings) { s.Alpha, s.MinEffectPct = 0, 0 }), nil, nil, "--alpha 0:"},
		{"effect 0", with(func(s *CompareSettings) { s.MinEffectPct = 0 }), []string{"x", "y"}, nil, "--min-effect 0: want a positive finite percentage"},
		{"error rate", with(func(s *CompareSettings) { s.MaxErrorRate = 1.5 }), []string{"x", "y"}, nil, "--max-error-rate 1.5: want a fraction between 0 and 1"},
		{"drop 0", with(func(s *CompareSettings) { s.MaxCompletedDropPct = 0 }), []string{"x", "y"}, nil, "--max-completed-drop 0: want a percentage above 0, at most 100"},
		{"threshold", with(func(s *CompareSettings) { s.FailOn = []string{"nope"} }), []string{"x", "y"}, nil, "--fail-on-regression: "},
		{"user metric", with(func(s *CompareSettings) { s.Metrics = []string{"no equals sign"} }), []string{"x", "y"}, nil, "--metric"},
	} {
		o, err := c.s.Options(c.args)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one starting %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(o.Dirs, c.dirs) {
			t.Errorf("%s: dirs %v, %v; want %v", c.name, o.Dirs, err, c.dirs)
		}
	}
	o, err := with(func(s *CompareSettings) { s.FailOn = []string{"time_to_first_token:10"} }).Options([]string{"x", "y"})
	if err != nil || len(o.Compare.FailOn) != 1 || o.Compare.Alpha != 0.05 || o.Compare.MinEffectPct != 5 {
		t.Errorf("thresholds %+v, %v", o.Compare, err)
	}
}
