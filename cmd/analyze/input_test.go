package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// A run.json written by a replay that knew fewer credential headers: the exports hold none
// of its secrets.
func TestExportsRedactSecrets(t *testing.T) {
	dir := buildRun(t, 5, 0)
	m, err := rawlog.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.CommandLine = []string{"replay", "--plan", "plan.plan", "--url", "http://u:pw-secret-1@h:8000/v1?api_key=qs-secret-2",
		"-H", "X-Custom-Token: hdr-secret-3", "--header=x-upstream-auth:hdr-secret-4", "--api-key", "sk-secret-5"}
	m.URLs = []string{"http://h:8000/v1?access_token=qs-secret-6"}
	if err := rawlog.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{fileJSON, fileCSV, fileRecords} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"pw-secret-1", "qs-secret-2", "hdr-secret-3", "hdr-secret-4", "sk-secret-5", "qs-secret-6"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the secret %q", f, s)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, fileJSON))
	for _, s := range []string{"X-Custom-Token: REDACTED", "access_token=REDACTED"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("%s lacks %q", fileJSON, s)
		}
	}
}

// Exit statuses of damaged input: an edited plan is bad input (2, one line); a damaged log
// fails the run (1) with the file named on stderr, even with --quiet; a damaged run.json is
// rebuilt (0, a note).
func TestDamagedInputExit(t *testing.T) {
	flip := func(t *testing.T, path string, at func([]byte) int) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[at(b)] ^= 0xFF
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("plan edited", func(t *testing.T) {
		dir := buildRun(t, 5, 0)
		flip(t, filepath.Join(dir, "plan.plan"), func(b []byte) int { return int(binary.LittleEndian.Uint64(b[48:])) + 48 })
		code, _, stderr := runCmd(dir)
		if code != 2 || !strings.Contains(stderr, "hash mismatch") || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q; want 2 and one line", code, stderr)
		}
	})
	t.Run("log damaged", func(t *testing.T) {
		dir := buildRun(t, 5, 0)
		log := filepath.Join(dir, "worker-000.rawlog")
		flip(t, log, func(b []byte) int { return len(b) / 2 })
		code, stdout, stderr := runCmd("--max-error-rate", "1", dir)
		if code != 1 || !strings.Contains(stderr, "DAMAGED INPUT: "+log) || !strings.Contains(stdout, "DAMAGED LOG") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
		if code, _, stderr := runCmd("-q", "--max-error-rate", "1", dir); code != 1 || !strings.Contains(stderr, log) {
			t.Fatalf("--quiet: exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("run.json truncated", func(t *testing.T) {
		dir := buildRun(t, 5, 0)
		// buildRun's header predates plan_path: the plan is found with --plan.
		os.WriteFile(filepath.Join(dir, rawlog.ManifestName), []byte(`{"format_version": 1, "plan_ha`), 0o644)
		code, stdout, stderr := runCmd("--plan", filepath.Join(dir, "plan.plan"), dir)
		if code != 0 || !strings.Contains(stdout, "REBUILT") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
	})
}
