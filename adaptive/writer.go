package adaptive

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// EventWriter appends events to a run's adaptive_scale_events.jsonl, one line each, written
// through at once so that a poller (or a crash) sees every decision as it is made.
type EventWriter struct {
	mu   sync.Mutex
	f    *os.File
	path string
	err  error
}

// CreateEvents creates dir's adaptive_scale_events.jsonl (replacing one there).
func CreateEvents(dir string) (*EventWriter, error) {
	path := filepath.Join(dir, EventsFile)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("adaptive: %w", err)
	}
	return &EventWriter{f: f, path: path}, nil
}

// Write writes e with this build's schema version; the first error is kept and returned by
// this and every later call.
func (w *EventWriter) Write(e Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	e.SchemaVersion = SchemaVersion
	b, err := json.Marshal(e)
	if err != nil {
		w.err = fmt.Errorf("adaptive: %s: %w", w.path, err)
		return w.err
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		w.err = fmt.Errorf("adaptive: %w", err)
	}
	return w.err
}

// Close closes the file and returns the first error of any write.
func (w *EventWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("adaptive: %w", err)
	}
	return w.err
}

// WriteSummary writes s (with this build's schema version) to dir's
// adaptive_scale_summary.json, atomically.
func WriteSummary(dir string, s Summary) error {
	s.SchemaVersion = SchemaVersion
	if s.Candidates == nil {
		s.Candidates = []Candidate{}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("adaptive: summary: %w", err)
	}
	path := filepath.Join(dir, SummaryFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("adaptive: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("adaptive: %w", err)
	}
	return nil
}

// ReadSummary reads adaptive_scale_summary.json at path and refuses another schema version.
func ReadSummary(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("adaptive: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("adaptive: %s: %v", path, err)
	}
	if s.SchemaVersion != SchemaVersion {
		return s, fmt.Errorf("adaptive: %s: schema_version %d, this build reads %d", path, s.SchemaVersion, SchemaVersion)
	}
	return s, nil
}

// Statuses of a summary, and the exit status each gives.
const (
	StatusComplete   = "complete"
	StatusFailed     = "failed"
	StatusIncomplete = "incomplete"
)

// ExitCode is the exit status a summary's status gives: 0 complete, 1 failed or incomplete.
func ExitCode(status string) int {
	if status == StatusComplete {
		return 0
	}
	return 1
}
