package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatesFileBadInput: a bad --gates file is bad input: exit 2, one line naming the file
// and the line, before any run is read.
func TestGatesFileBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, doc, want string }{
		{"unknown field", "version: 1\ngates:\n  - gate: request_count>1\n    owner: a\n    reasons: b\n", "line 5: unknown field \"reasons\""},
		{"no owner", "version: 1\ngates:\n  - gate: request_count>1\n    reason: b\n", "line 3: gate \"request_count>1\" has no owner"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"--gates", path, filepath.Join(dir, "no-such-run")}, &out, &errb)
		line := strings.TrimSuffix(errb.String(), "\n")
		if code != 2 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "analyze: --gates "+path) || !strings.Contains(line, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", c.name, code, errb.String(), c.want)
		}
	}
	if code := run([]string{"--gates", filepath.Join(dir, "missing.yaml"), dir}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("missing --gates file: exit %d, want 2", code)
	}
}
