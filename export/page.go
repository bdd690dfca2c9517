package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/report"
)

// FileReport is the run page Run writes into the output directory (docs/report.md).
const FileReport = "report.html"

// page is report.html of one Run: where it goes, and what the Run collects for it.
type page struct {
	off  bool
	path string
	recs *report.Records
	// gates are the gate lines of the Run, as printed; control an adaptive-scale run's
	// control value over time (adaptive.go).
	gates   []report.GateLine
	control *report.Control
}

func newPage(off bool, path string) *page { return &page{off: off, path: path} }

// tee returns the writer analyze streams its records to: w, and the page's collector
// (the collector alone when w is nil). It starts a new page.
func (h *page) tee(w io.Writer) io.Writer {
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
func (h *page) gate(ok bool, line string) {
	h.gates = append(h.gates, report.GateLine{Text: line, OK: ok})
}

// target is where the page of a Run writing into dir goes; "" with NoHTML.
func (h *page) target(dir string) string {
	switch {
	case h.off:
		return ""
	case h.path != "":
		return h.path
	}
	return filepath.Join(dir, FileReport)
}

// CheckHTMLDir refuses an --html file whose directory does not exist: found before the run.
func CheckHTMLDir(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("--html %s: its directory %s does not exist", path, filepath.Dir(path))
	}
	return nil
}

// write writes the page of s (into dir unless --html names the file) and says where on
// stdout unless quiet.
func (h *page) write(dir string, s *analyze.Summary, quiet bool, stdout io.Writer) error {
	if h.off || h.recs == nil {
		return nil
	}
	if err := h.recs.Close(); err != nil {
		return err
	}
	path := h.target(dir)
	if err := WriteFileAtomic(path, func(w io.Writer) error {
		return report.WriteRun(w, report.RunInput{Summary: s, Records: h.recs, Gates: h.gates, Control: h.control})
	}); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	if !quiet {
		fmt.Fprintf(stdout, "Report: %s\n", path)
	}
	h.recs = nil
	return nil
}
