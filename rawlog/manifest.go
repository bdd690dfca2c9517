package rawlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name inside a run directory.
const ManifestName = "run.json"

// ManifestVersion is the run.json format version.
const ManifestVersion = 1

// Run statuses.
const (
	StatusRunning     = "running"
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	// StatusKilled is a worker's status when a signal ended it.
	StatusKilled = "killed"
	// StatusRecovered is the footer status of a recovery log (WorkerInfo.RecoveryLog).
	StatusRecovered = "recovered"
)

// Manifest is run.json: what was run, where, when, and how it ended. It is rewritten atomically
// as the run progresses, so a crashed run still has one (with status "running").
type Manifest struct {
	FormatVersion int    `json:"format_version"`
	Tool          string `json:"tool"`
	ToolVersion   string `json:"tool_version"`
	GoVersion     string `json:"go_version"`
	// PlanHash is the hex SHA-256 identity of the plan; PlanPath where it was read from.
	PlanHash string `json:"plan_hash"`
	PlanPath string `json:"plan_path"`
	// URLs are the base URLs requests were sent to.
	URLs []string `json:"urls"`
	// StartUnixNs is the wall-clock time of the run's monotonic zero; every *Ns time in the
	// logs is nanoseconds after it on the coordinator's monotonic clock.
	StartUnixNs int64 `json:"start_unix_ns"`
	// StartTime is StartUnixNs in RFC 3339, for people.
	StartTime string `json:"start_time"`
	// EndUnixNs is when the run finished (0 while running).
	EndUnixNs int64 `json:"end_unix_ns"`
	// Workers lists the worker processes and their logs.
	Workers []WorkerInfo `json:"workers"`
	// TelemetryLog is the GPU telemetry log's file name, empty when NVML was unavailable.
	TelemetryLog string `json:"telemetry_log,omitempty"`
	// TelemetryNote says why there is no telemetry.
	TelemetryNote string `json:"telemetry_note,omitempty"`
	Host          string `json:"host"`
	Kernel        string `json:"kernel"`
	CPUModel      string `json:"cpu_model,omitempty"`
	// CommandLine is the replay command line with secrets redacted.
	CommandLine []string `json:"command_line"`
	// Options are the replay options after defaults (secrets redacted).
	Options map[string]any `json:"options,omitempty"`
	// Status is running, complete, interrupted or failed; Error says why it failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Counts tally outcomes over all workers.
	Counts Counts `json:"counts"`
}

// WorkerInfo describes one worker process.
type WorkerInfo struct {
	ID  int    `json:"id"`
	PID int    `json:"pid"`
	CPU int    `json:"cpu"`
	Log string `json:"log"`
	// Planned is the number of plan records in this worker's shard.
	Planned int `json:"planned"`
	// Status is how the worker ended: complete, interrupted, failed or killed.
	Status string `json:"status"`
	// Lost counts planned requests the worker started (its log has their Sent record) but
	// whose Request record is in no log: they were in flight when the worker died, and how
	// they ended is unknown.
	Lost int `json:"lost"`
	// RecoveryLog names the log the coordinator wrote for a worker that died (or never
	// started): one not_sent Request record for each planned request the worker never sent.
	// Empty when there is none. Readers read it along with Log.
	RecoveryLog string `json:"recovery_log,omitempty"`
	// Recovered is the number of Request records in RecoveryLog; Log holds at most
	// Planned - Recovered.
	Recovered int `json:"recovered,omitempty"`
}

// Counts tally request outcomes. Every planned request is in exactly one of the others:
// Planned = Completed + Failed + Cancelled + Aborted + NotSent + Lost.
type Counts struct {
	Planned   int `json:"planned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Aborted   int `json:"aborted"`
	NotSent   int `json:"not_sent"`
	Lost      int `json:"lost"`
}

// WriteManifest writes m to dir/run.json atomically (temporary file, then rename).
func WriteManifest(dir string, m *Manifest) error {
	m.FormatVersion = ManifestVersion
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("rawlog: encode manifest: %w", err)
	}
	tmp := filepath.Join(dir, ManifestName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ManifestName)); err != nil {
		return fmt.Errorf("rawlog: %w", err)
	}
	return nil
}

// ReadManifest reads dir/run.json and checks its version.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rawlog: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("rawlog: %s: %w", path, err)
	}
	if m.FormatVersion != ManifestVersion {
		return nil, fmt.Errorf("rawlog: %s: run.json format version %d is not supported (this build reads version %d)", path, m.FormatVersion, ManifestVersion)
	}
	return &m, nil
}
