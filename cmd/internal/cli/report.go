package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/report"
	"github.com/llmbench/llmbench/tokenizer"
)

// FileReport is the run page analyze writes into the run directory (docs/report.md).
const FileReport = "report.html"

// htmlFlags are analyze's report.html flags, and what one Run collects for the page.
type htmlFlags struct {
	off  bool
	path string
	recs *report.Records
	// gates are the gate lines of the current Run, as printed.
	gates []report.GateLine
}

func addHTMLFlags(fs *pflag.FlagSet) *htmlFlags {
	h := &htmlFlags{}
	fs.BoolVar(&h.off, "no-html", false, "do not write "+FileReport)
	fs.StringVar(&h.path, "html", "", "write the HTML report to this file (default: "+FileReport+" in the output directory)")
	return h
}

// tee returns the writer analyze streams its records to: w, and the page's collector
// (the collector alone when w is nil). It starts a new page.
func (h *htmlFlags) tee(w io.Writer) io.Writer {
	h.recs, h.gates = nil, nil
	if h.off {
		return w
	}
	h.recs = &report.Records{}
	if w == nil || w == io.Discard {
		return h.recs
	}
	return io.MultiWriter(w, h.recs)
}

// gate records one gate line for the page.
func (h *htmlFlags) gate(ok bool, line string) {
	h.gates = append(h.gates, report.GateLine{Text: line, OK: ok})
}

// target is where the page of a Run writing into dir goes; "" with --no-html.
func (h *htmlFlags) target(dir string) string {
	switch {
	case h.off:
		return ""
	case h.path != "":
		return h.path
	}
	return filepath.Join(dir, FileReport)
}

// checkDir refuses an --html file whose directory does not exist: found before the run.
func (h *htmlFlags) checkDir() error {
	if h.path == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(h.path)); err != nil || !st.IsDir() {
		return fmt.Errorf("--html %s: its directory %s does not exist", h.path, filepath.Dir(h.path))
	}
	return nil
}

// write writes the page of s (into dir unless --html names the file) and says where on
// stdout unless quiet.
func (h *htmlFlags) write(dir string, s *analyze.Summary, quiet bool, stdout io.Writer) error {
	if h.off || h.recs == nil {
		return nil
	}
	if err := h.recs.Close(); err != nil {
		return err
	}
	path := h.target(dir)
	if err := writeFile(path, func(w io.Writer) error {
		return report.WriteRun(w, report.RunInput{Summary: s, Records: h.recs, Gates: h.gates})
	}); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if !quiet {
		fmt.Fprintf(stdout, "Report: %s\n", path)
	}
	h.recs = nil
	return nil
}

// loadTokenizer loads a tokenizer as every command does (docs/tokenizers.md).
func loadTokenizer(spec string) (analyze.TokenCounter, error) {
	t, err := tokenizer.LoadWithOptions(spec, tokenizer.EnvLoadOptions(os.Getenv))
	if err != nil {
		return nil, err
	}
	return t, nil
}
