package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
)

// Run is one run directory and its run.json.
type Run struct {
	Dir      string
	Manifest *rawlog.Manifest
}

// Open opens the run directories given to analyze together: a distributed run's directory
// stands for its shards (Expand), each run.json is read (ReadManifest), and the runs must be
// of one plan. notes say what was rebuilt.
func Open(dirs []string) (runs []Run, notes []string, err error) {
	if len(dirs) == 0 {
		return nil, nil, Errorf("no run directory given")
	}
	seen := map[string]bool{}
	dirs, err = Expand(dirs)
	if err != nil {
		return nil, nil, err
	}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err == nil && seen[abs] {
			return nil, nil, Errorf("%s: run directory given twice", dir)
		}
		seen[abs] = true
		m, note, err := ReadManifest(dir)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		if len(runs) > 0 && m.PlanHash != runs[0].Manifest.PlanHash {
			a, b := rawlog.HashPrefixes(m.PlanHash, runs[0].Manifest.PlanHash)
			return nil, nil, Errorf("%s: plan %s differs from %s's plan %s: only shards of one plan can be analysed together",
				filepath.Join(dir, rawlog.ManifestName), a, runs[0].Dir, b)
		}
		runs = append(runs, Run{Dir: dir, Manifest: m})
	}
	return runs, notes, nil
}

// ReadManifest reads dir/run.json; a damaged one (cut short, garbled: rawlog.ErrManifest) is
// rebuilt from the logs' headers, and note then says so. One that decodes but is
// inconsistent is bad input: it was written that way, and the logs cannot say which is right.
func ReadManifest(dir string) (m *rawlog.Manifest, note string, err error) {
	m, err = rawlog.ReadManifest(dir)
	if err == nil || !errors.Is(err, rawlog.ErrManifest) {
		return m, "", Wrap(err)
	}
	rm, rerr := rawlog.RebuildManifest(dir)
	if rerr != nil {
		return nil, "", Errorf("%v; rebuilding it from the logs failed too: %v", err, rerr)
	}
	note = fmt.Sprintf("%v: REBUILT from the headers of %d worker logs (plan, start, workers, shard sizes); the URLs, command line, options and run status it held are unknown",
		err, len(rm.Workers))
	return rm, note, nil
}

// Expand replaces a directory that holds no run.json but subdirectories that do (a
// distributed run's <run-id>/shard-<I>/ layout) by those subdirectories, in name order.
func Expand(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, rawlog.ManifestName)); err == nil {
			out = append(out, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf("%s does not exist: no run and no shard ran into it (a replay, or every shard of a distributed run, that refuses to start writes nothing: see its stderr)", d)
		}
		if err != nil {
			out = append(out, d) // ReadManifest says what is wrong with it
			continue
		}
		var sub, empty []string
		logs := false
		for _, e := range entries {
			switch {
			case e.IsDir() && fileExists(filepath.Join(d, e.Name(), rawlog.ManifestName)):
				sub = append(sub, filepath.Join(d, e.Name()))
			case e.IsDir():
				empty = append(empty, e.Name())
			case strings.HasSuffix(e.Name(), ".rawlog"):
				logs = true // a run without its run.json: ReadManifest says so
			}
		}
		if len(sub) == 0 && !logs {
			return nil, noRunErr(d, empty)
		}
		if len(sub) == 0 {
			out = append(out, d)
			continue
		}
		sort.Slice(sub, func(i, j int) bool { return shardDirLess(sub[i], sub[j]) })
		out = append(out, sub...)
	}
	return out, nil
}

// noRunErr is the error about a directory that holds no run: no run.json, no log, and no
// subdirectory with a run.json. subdirs are its subdirectories (a distributed run's
// shard-<I>, each empty when its shard refused to start).
func noRunErr(d string, subdirs []string) error {
	sort.Slice(subdirs, func(i, j int) bool { return shardDirLess(subdirs[i], subdirs[j]) })
	if len(subdirs) > 0 {
		if len(subdirs) > 4 {
			subdirs = append(subdirs[:4:4], "...")
		}
		return Errorf("%s: no shard ran: neither it nor its subdirectories (%s) hold a %s, so no replay (no shard of a distributed run) wrote a run there; "+
			"a replay that refuses to start (a --start-at already past, a plan hash that differs...) writes nothing: see its stderr", d, strings.Join(subdirs, ", "), rawlog.ManifestName)
	}
	return Errorf("%s: no run and no shard ran into it: it holds no %s, no log and no run directory (a replay, or every shard of a distributed run, that refuses to start writes nothing: see its stderr)",
		d, rawlog.ManifestName)
}

// shardDirLess orders shard-2 before shard-10.
func shardDirLess(a, b string) bool {
	na, ea := strconv.Atoi(strings.TrimPrefix(filepath.Base(a), "shard-"))
	nb, eb := strconv.Atoi(strings.TrimPrefix(filepath.Base(b), "shard-"))
	if ea == nil && eb == nil && na != nb {
		return na < nb
	}
	return a < b
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
