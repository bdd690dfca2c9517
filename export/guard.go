package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/analyze/benchclaim"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay"
)

// outputGuard refuses an output path that would replace one of the analysis's inputs: a run
// file by its name, in whatever directory (replay.IsRunFile: run.json, a worker log,
// server_metrics.jsonl...), or a file the analysis reads (the plan, the gates file, the
// tokenizer file, the shape reference, the generator validation file), or an existing file
// that holds a plan or a raw log by its bytes, whatever its name (heldFormat). Outputs are written
// through a temporary file renamed into place, so only a name can be damaged: paths are
// compared after resolving the symbolic links of their directories.
type outputGuard struct {
	inputs map[string]string // resolved path -> what it is, for the message
}

func newOutputGuard() *outputGuard { return &outputGuard{inputs: map[string]string{}} }

// add records path as an input; "" is ignored.
func (g *outputGuard) add(what, path string) {
	if path == "" {
		return
	}
	g.inputs[resolvePath(path)] = what
}

// check refuses writing path (named by flag in the message).
func (g *outputGuard) check(flag, path string) error {
	if replay.IsRunFile(filepath.Base(path)) {
		return fmt.Errorf("%s %s: %s is the name of a run's own file (an input of analyze); choose another name", flag, path, filepath.Base(path))
	}
	if what, ok := g.inputs[resolvePath(path)]; ok {
		return fmt.Errorf("%s %s: that is %s, an input of this analysis; choose another path", flag, path, what)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory", flag, path)
	}
	if what := heldFormat(path); what != "" {
		return fmt.Errorf("%s %s: the file holds %s (replay's or analyze's input, whatever its name); choose another path", flag, path, what)
	}
	return nil
}

// heldFormat names what an existing file at path holds by its first bytes, "a plan"
// (mmapds.Magic) or "a raw log" (rawlog.Magic), or "" for anything else: a run's data under
// a name no rule knows (a copied run's own plan, a log kept under another name) is never
// replaced by an export.
func heldFormat(path string) string {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return "" // nothing there, or no file to read (a FIFO would block)
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var b [8]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return ""
	}
	switch string(b[:]) {
	case mmapds.Magic:
		return "a plan"
	case rawlog.Magic:
		return "a raw log"
	}
	return ""
}

// checkAll checks every output.
func (g *outputGuard) checkAll(outs []outFile) error {
	for _, o := range outs {
		if err := g.check(o.flag, o.path); err != nil {
			return err
		}
	}
	return nil
}

// outFile is one file analyze writes, and the flag that chose its place.
type outFile struct{ flag, path string }

// resolvePath is path absolute, its directory's symbolic links resolved as far as it
// exists.
func resolvePath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}

// inputsBefore records the inputs o and the run directories name, before the analysis.
func (g *outputGuard) inputsBefore(o Options, dirs []string) {
	plan, tok := o.Analysis.PlanPath, o.Analysis.TokenizerSpec
	g.add("the --plan file", plan)
	if st, err := os.Stat(tok); tok != "" && err == nil && !st.IsDir() {
		g.add("the --tokenizer file", tok)
	}
	g.add("the --gates file", o.Claim.GatesFile)
	g.add("the --generator-validation file", o.Claim.GeneratorFile)
	if ref := o.Claim.ValidateShape; ref != "" {
		g.add("the --validate-shape reference", ref)
		if _, path, ok := strings.Cut(ref, ":"); ok {
			g.add("the --validate-shape reference", path)
		}
	}
	for _, d := range dirs {
		g.add("a run's generator validation file", filepath.Join(d, benchclaim.GeneratorValidationName))
		if m, err := rawlog.ReadManifest(d); err == nil && m.PlanPath != "" {
			// Named before the analysis reads it: where analyze looks for it (as given,
			// relative to the run, or beside run.json).
			for _, p := range []string{m.PlanPath, filepath.Join(d, m.PlanPath), filepath.Join(d, filepath.Base(m.PlanPath))} {
				g.add("the plan of the run", p)
			}
		}
	}
}

// inputsAfter records what only the analysis knew: the plan it read (run.json's plan_path)
// and the run directories a distributed run's folder expanded to.
func (g *outputGuard) inputsAfter(s *analyze.Summary) {
	g.add("the plan of the run", s.PlanPath)
	for _, d := range s.RunDirs {
		g.add("a run's generator validation file", filepath.Join(d, benchclaim.GeneratorValidationName))
	}
}

// mkdirNew creates dir and its missing parents; undo removes what it created, when still
// empty (analyze refused its input: no folder is left behind).
func mkdirNew(dir string) (undo func(), err error) {
	var made []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return func() {}, err
	}
	return func() {
		for _, p := range made {
			if os.Remove(p) != nil {
				return
			}
		}
	}, nil
}
