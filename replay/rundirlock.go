package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/servermetrics"
)

// The run directory is locked before anything is written into it (docs/run-format.md, "The
// run directory"): it must hold no run file (IsRunFile), and the run's first write creates
// run.json exclusively (rawlog.CreateManifest). Of several replays given one directory at
// once exactly one creates it; the others exit 2 having written nothing. A directory left by
// a crashed run keeps its run.json (status "running") and logs, so it is never locked
// again: analyse it, or remove it.

// CheckOutputDir reports whether dir can take a new run, as New checks it: it holds no run
// file, and it (or the nearest folder above it) takes new files. Nothing is created. For
// callers that do work of their own before the run (a generator validation) and must not do
// it for a directory the run will refuse.
func CheckOutputDir(dir string) error { return checkOutputDir(dir) }

// IsRunFile reports whether name is the name of a file replay writes into a run directory:
// run.json (and its temporary file), a worker's log or recovery log, the telemetry log,
// server_metrics.jsonl, the space reserve. A directory holding one is a run's, and nothing
// may be written over one (analyze's outputs included).
func IsRunFile(name string) bool {
	switch name {
	case rawlog.ManifestName, rawlog.ManifestName + ".tmp", TelemetryLogName, servermetrics.FileName, reserveName:
		return true
	}
	return strings.HasPrefix(name, "worker-") && strings.HasSuffix(name, ".rawlog")
}

// checkOutputDir checks, creating nothing that outlives it, that dir can take a new run: it
// holds no run file (an earlier run's logs are never mixed with or overwritten by this
// one's), and it, or the nearest existing folder above it, is a folder this process can
// create files in.
func checkOutputDir(dir string) error {
	if err := checkNoRun(dir); err != nil {
		return err
	}
	probe := filepath.Clean(dir)
	for {
		st, err := os.Stat(probe)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("output-dir %s: %s is not a directory", dir, probe)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("output-dir %s: %w", dir, err)
		}
		up := filepath.Dir(probe)
		if up == probe {
			return fmt.Errorf("output-dir %s: %w", dir, err)
		}
		probe = up
	}
	// Permission bits do not tell (root ignores them, a read-only mount overrides them):
	// try it.
	d, err := os.MkdirTemp(probe, ".replay-check-")
	if err != nil {
		return fmt.Errorf("output-dir %s: cannot create files in %s: %w", dir, probe, errors.Unwrap(err))
	}
	os.Remove(d)
	return nil
}

// checkNoRun refuses a directory that holds a run file.
func checkNoRun(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // absent (or unreadable: the caller's next step says so)
	}
	var found []string
	for _, e := range entries {
		if IsRunFile(e.Name()) {
			found = append(found, e.Name())
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("output-dir %s already holds a run (%s); choose another directory", dir, describeRunFiles(dir, found))
	}
	return nil
}

// describeRunFiles says what run files dir holds: run.json's status when it has one (a
// crashed run's is still "running"), else the first files found.
func describeRunFiles(dir string, found []string) string {
	sort.Strings(found)
	for _, f := range found {
		if f != rawlog.ManifestName {
			continue
		}
		m, err := rawlog.ReadManifest(dir)
		switch {
		case err != nil:
			return rawlog.ManifestName + ", unreadable"
		case m.Status == rawlog.StatusRunning:
			return rawlog.ManifestName + " with status running: a run still running, or one that crashed"
		default:
			return rawlog.ManifestName + " with status " + m.Status
		}
	}
	if len(found) > 3 {
		found = append(found[:3:3], "...")
	}
	return strings.Join(found, ", ") + ", without " + rawlog.ManifestName
}

// lockRunDir makes the output directory this run's: it creates it when missing (its parents
// too), then run.json in it exclusively, as the run's first write. On an error nothing of
// this run is left: not run.json, not a directory it created.
func (r *Replay) lockRunDir() error {
	r.dir = r.opts.OutputDir
	// New checked it all; another run may have come since. No write probe this time: the
	// exclusive create below is one, and a run that loses writes nothing at all.
	if err := checkNoRun(r.dir); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	clean := filepath.Clean(r.dir)
	if err := os.MkdirAll(filepath.Dir(clean), 0o755); err != nil {
		return fmt.Errorf("replay: output-dir: %w", err)
	}
	created := false
	switch err := os.Mkdir(clean, 0o755); {
	case err == nil:
		created = true
	case errors.Is(err, fs.ErrExist): // a folder: checkOutputDir said so
	default:
		return fmt.Errorf("replay: output-dir: %w", err)
	}
	r.initManifest()
	if err := rawlog.CreateManifest(r.dir, &r.manifest); err != nil {
		if created {
			os.Remove(clean) // only when empty: not when the run that won wrote into it
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("replay: output-dir %s: another run took it while this one was starting (its %s appeared first); nothing was written: choose another directory",
				r.dir, rawlog.ManifestName)
		}
		return fmt.Errorf("replay: output-dir %s: %w", r.dir, err)
	}
	return nil
}
