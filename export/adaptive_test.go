package export

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/adaptive"
)

// auditFixture is adaptive/audit's fixture: a run against mockllm and hand-written events.
const auditFixture = "../adaptive/audit/testdata"

// copyAuditRun copies the audit fixture's run, its plan and the events of case name into a
// new directory, run.json pointed at the copied plan; no events with name "".
func copyAuditRun(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(auditFixture, "run", "*"))
	files = append(files, filepath.Join(auditFixture, "fixture.llmplan"))
	if name != "" {
		files = append(files, filepath.Join(auditFixture, name, adaptive.EventsFile), filepath.Join(auditFixture, name, adaptive.SummaryFile))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "run.json" {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["plan_path"] = filepath.Join(dst, "fixture.llmplan")
			if b, err = json.MarshalIndent(m, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestRunAuditsAdaptiveScale: analyze audits a run directory holding adaptive-scale events:
// its lines and gate line, the JSON block and the page's control chart; a window that
// disagrees with the raw logs fails the run (exit 1), an unreadable events file is bad input.
func TestRunAuditsAdaptiveScale(t *testing.T) {
	cases := []struct {
		name, line string
		code       int
	}{
		{"", "", ExitOK},
		{"agree", "Adaptive audit: PASS (3 windows recomputed from the raw logs", ExitOK},
		{"wrong-value", "Adaptive audit: FAIL (1 of 4 windows disagree with the raw logs: window 2)", ExitGate},
		{"wrong-decision", "Adaptive audit: FAIL (1 of 4 windows disagree with the raw logs: window 0)", ExitGate},
	}
	for _, c := range cases {
		dir := copyAuditRun(t, c.name)
		var out, errb bytes.Buffer
		s, code := Run(options(dir, &out, &errb))
		if code != c.code || s == nil {
			t.Fatalf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out.String(), errb.String())
		}
		js, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
		if err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(dir, FileReport))
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "" {
			if strings.Contains(out.String(), "Adaptive audit") || strings.Contains(out.String(), "Adaptive scale audit") || bytes.Contains(js, []byte("adaptive_scale_audit")) || bytes.Contains(page, []byte("adaptive_control")) {
				t.Errorf("a run without adaptive scale has an audit")
			}
			continue
		}
		if !strings.Contains(out.String(), "\n"+c.line) || !strings.Contains(out.String(), "Adaptive scale audit of "+filepath.Join(dir, adaptive.EventsFile)) {
			t.Errorf("%s: stdout lacks %q:\n%s", c.name, c.line, out.String())
		}
		var export struct {
			LLMBench struct {
				Audit *struct {
					Passed  bool `json:"passed"`
					Windows []struct {
						Agrees bool `json:"agrees"`
					} `json:"windows"`
				} `json:"adaptive_scale_audit"`
			} `json:"llmbench"`
		}
		if err := json.Unmarshal(js, &export); err != nil || export.LLMBench.Audit == nil || export.LLMBench.Audit.Passed != (c.code == ExitOK) || len(export.LLMBench.Audit.Windows) != 4 {
			t.Errorf("%s: JSON export's audit block: %v %+v", c.name, err, export.LLMBench.Audit)
		}
		if !bytes.Contains(page, []byte(`"id":"adaptive_control"`)) {
			t.Errorf("%s: report.html has no control chart", c.name)
		}
	}
	dir := copyAuditRun(t, "agree")
	if err := os.WriteFile(filepath.Join(dir, adaptive.EventsFile), []byte("{\"schema_version\":1}\n{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if _, code := Run(options(dir, &out, &errb)); code != ExitBadInput || strings.Count(errb.String(), "\n") != 1 ||
		!strings.Contains(errb.String(), filepath.Join(dir, adaptive.EventsFile)+":2: ") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
