package rundir

import (
	"fmt"
	"path/filepath"
)

// Log is one log file of a run to read.
type Log struct {
	// Run is the index of its run in the runs given; Path the file.
	Run  int
	Path string
	// Worker is the worker's WorkerInfo.ID, or -1 for the telemetry log; Planned the
	// planned requests the log holds.
	Worker    int
	Planned   int
	Telemetry bool
	// Recovery marks the not_sent records replay wrote for a worker that died: requests,
	// but no worker activity of their own.
	Recovery bool
}

// LostWhat says what is lost when none of the log can be read.
func (l Log) LostWhat() string {
	if l.Telemetry {
		return "the run has no GPU telemetry"
	}
	return fmt.Sprintf("its %d planned requests are counted as lost", l.Planned)
}

// Logs lists the runs' logs in the order they are read and merged: each run's worker logs
// (a dead worker's recovery log after its own), then its telemetry log. planned is the
// workers' planned requests, Σ WorkerInfo.Planned.
func Logs(runs []Run) (logs []Log, planned int) {
	for ri, r := range runs {
		for _, w := range r.Manifest.Workers {
			// A worker that died has a recovery log too, written by replay: the requests it
			// never sent, as not_sent records. Each log is one job with its share of the
			// worker's planned requests, so what neither holds counts as lost.
			logs = append(logs, Log{Run: ri, Path: filepath.Join(r.Dir, w.Log), Worker: w.ID, Planned: w.Planned - w.Recovered})
			if w.RecoveryLog != "" {
				logs = append(logs, Log{Run: ri, Path: filepath.Join(r.Dir, w.RecoveryLog), Worker: w.ID, Planned: w.Recovered, Recovery: true})
			}
			planned += w.Planned
		}
		if r.Manifest.TelemetryLog != "" {
			logs = append(logs, Log{Run: ri, Path: filepath.Join(r.Dir, r.Manifest.TelemetryLog), Worker: -1, Telemetry: true})
		}
	}
	return logs, planned
}
