package export

import (
	"strings"
	"testing"
	"time"
)

// TestSettingsCheck: each bad setting is refused before any run is read, naming its flag.
func TestSettingsCheck(t *testing.T) {
	good := func() Settings {
		return Settings{ExportLevel: LevelRecords, ExportPrefix: DefaultExportPrefix, MaxScheduleLag: time.Millisecond, MaxWorkerCPUPct: 90}
	}
	if err := (&Settings{}).Check(); err == nil {
		t.Fatal("the zero settings pass")
	}
	cases := []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.ExportLevel = "all" }, `--export-level "all"`},
		{func(s *Settings) { s.ExportPrefix = "a/b" }, "--profile-export-prefix"},
		{func(s *Settings) { s.MaxErrorRate = 1.5 }, "--max-error-rate 1.5"},
		{func(s *Settings) { s.MaxWorkerCPUPct = 0 }, "--max-worker-cpu 0: want a positive finite percentage"},
		{func(s *Settings) { s.Parallelism = -1 }, "--parallelism -1"},
		{func(s *Settings) { s.NoHTML, s.HTML = true, "r.html" }, "contradict"},
		{func(s *Settings) { s.Exports = []string{"csv"} }, `--export "csv": want parquet`},
		{func(s *Settings) { s.Gates = []string{"no_such_metric.p99<1"} }, "no_such_metric"},
		{func(s *Settings) { s.GoodputSet = true }, "goodput"},
	}
	for _, c := range cases {
		s := good()
		c.edit(&s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	s := good()
	s.Gates, s.MaxWorkerCPUPct = []string{"time_to_first_token.p99<400"}, 50
	o, err := s.Options([]string{"run"})
	if err != nil || len(o.Gates) != 1 || o.Analysis.MaxWorkerCPU != 0.5 || o.RunDirs[0] != "run" {
		t.Fatalf("good settings: %+v, %v", o, err)
	}
	if err := s.CheckStreaming(false); err == nil || !strings.Contains(err.Error(), "time_to_first_token") {
		t.Errorf("a TTFT gate on a run without streaming: %v", err)
	}
}
