// Package columnar writes an analysis's per-request rows (analyze.Options.Rows) as Parquet
// files a data team queries with DuckDB or pandas: requests.parquet, one row per profile
// request the analysis is over, and chunks.parquet, one row per content event. The columns
// and their units are docs/run-format.md "Parquet export".
//
// The analysis reads its logs several at once; each part (a log, then the planned requests
// no log holds) is written to a temporary file of its own beside the outputs, and Finish
// copies the parts' row groups, in part order, into the two files, so their rows are in a
// fixed order (part, then the log's order) whatever the reading order was.
package columnar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/llmbench/llmbench/analyze"
)

// The files Finish writes into the output directory.
const (
	FileRequests = "requests.parquet"
	FileChunks   = "chunks.parquet"
)

// Files collects the rows of one analysis into part files and joins them (Finish).
type Files struct {
	dir      string
	requests *table
	chunks   *table
	mu       sync.Mutex
	parts    map[int]*part
}

// New returns the Parquet files of an analysis with reg's metrics (nil: the built-ins),
// written into dir, grouped (a group column) when grouped.
func New(dir string, reg *analyze.Registry, grouped bool) *Files {
	return &Files{dir: dir, requests: requestTable(reg, grouped), chunks: chunkTable(), parts: map[int]*part{}}
}

// Part is analyze.Options.Rows: the sink of part i's rows.
func (f *Files) Part(i int) (analyze.RowSink, error) {
	p := &part{f: f}
	var err error
	if p.req, err = f.requests.create(f.dir, i); err != nil {
		return nil, err
	}
	if p.chk, err = f.chunks.create(f.dir, i); err != nil {
		p.req.abort()
		return nil, err
	}
	f.mu.Lock()
	f.parts[i] = p
	f.mu.Unlock()
	return p, nil
}

// Finish closes the parts and writes requests.parquet and chunks.parquet into the output
// directory (through a temporary file each, renamed into place), then removes the parts.
func (f *Files) Finish() error {
	defer f.Remove()
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]int, 0, len(f.parts))
	for i, p := range f.parts {
		ids = append(ids, i)
		if err := p.close(); err != nil {
			return err
		}
	}
	slices.Sort(ids)
	var reqs, chks []*partFile
	for _, i := range ids {
		reqs, chks = append(reqs, f.parts[i].req), append(chks, f.parts[i].chk)
	}
	if err := f.requests.join(filepath.Join(f.dir, FileRequests), reqs); err != nil {
		return err
	}
	return f.chunks.join(filepath.Join(f.dir, FileChunks), chks)
}

// Remove removes the part files (Finish does; call it when the analysis failed).
func (f *Files) Remove() {
	for _, p := range f.parts {
		p.req.abort()
		p.chk.abort()
	}
}

// part writes one part's rows.
type part struct {
	f        *Files
	req, chk *partFile
	row      parquet.Row
}

// Row implements analyze.RowSink.
func (p *part) Row(r *analyze.RequestRow) error {
	p.row = p.f.requests.row(p.row[:0], r, -1)
	if err := p.req.write(p.row); err != nil {
		return err
	}
	for i := range r.Chunks {
		p.row = p.f.chunks.row(p.row[:0], r, i)
		if err := p.chk.write(p.row); err != nil {
			return err
		}
	}
	return nil
}

func (p *part) close() error { return errors.Join(p.req.close(), p.chk.close()) }

// partFile is one part's temporary file of one table.
type partFile struct {
	path   string
	file   *os.File
	w      *parquet.GenericWriter[any]
	closed bool
}

func (t *table) create(dir string, i int) (*partFile, error) {
	f, err := os.CreateTemp(dir, fmt.Sprintf(".%s.part%d.*.tmp", t.name, i))
	if err != nil {
		return nil, fmt.Errorf("parquet export: %w", err)
	}
	return &partFile{path: f.Name(), file: f, w: parquet.NewGenericWriter[any](f, t.schema, parquet.Compression(&parquet.Zstd))}, nil
}

func (p *partFile) write(row parquet.Row) error {
	if _, err := p.w.WriteRows([]parquet.Row{row}); err != nil {
		return fmt.Errorf("parquet export: %s: %w", p.path, err)
	}
	return nil
}

func (p *partFile) close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	err := p.w.Close()
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("parquet export: %s: %w", p.path, err)
	}
	return nil
}

func (p *partFile) abort() {
	if !p.closed {
		p.closed = true
		p.file.Close()
	}
	os.Remove(p.path)
}

// join writes path from the parts' row groups, in order (a table with no part has no row).
func (t *table) join(path string, parts []*partFile) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("parquet export: %w", err)
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("parquet export: %s: %w", path, err)
	}
	w := parquet.NewGenericWriter[any](tmp, t.schema, parquet.Compression(&parquet.Zstd))
	for _, p := range parts {
		if err := copyGroups(w, p.path); err != nil {
			return fail(err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	return nil
}

// copyGroups appends the row groups of the part file at path to w.
func copyGroups(w *parquet.GenericWriter[any], path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	for _, rg := range pf.RowGroups() {
		if _, err := w.WriteRowGroup(rg); err != nil {
			return err
		}
	}
	return nil
}
