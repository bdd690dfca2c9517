package mmapds

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// Writer writes a plan file. Bodies stream straight to the file, so memory holds only the
// 64-byte records; the header and the hash are written by Close.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	f         *os.File
	path      string // the plan file, which appears only once complete
	tmp       string // where it is written until then
	bw        *bufio.Writer
	bodiesLen uint64
	records   []byte
	count     uint64
	media     bool // a record names a media entry: the file needs version 2
	graph     graphWriter
	err       error
}

// Create starts a plan file at path. It is written to a temporary file beside path and
// renamed over path by Close, so path never holds a partial plan (and a plan already there,
// perhaps mapped by a running replay, is replaced, not truncated). On error the temporary
// file is removed.
func Create(path string) (*Writer, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("mmapds: creating %s: %w", path, err)
	}
	w := &Writer{f: f, path: path, tmp: f.Name(), bw: bufio.NewWriterSize(f, 1<<20)}
	var zero [HeaderSize]byte
	if _, err := w.bw.Write(zero[:]); err != nil {
		w.abort()
		return nil, fmt.Errorf("mmapds: %s: %w", path, err)
	}
	return w, nil
}

// BodyRef locates a body already written to the bodies blob. Records may share a body: a plan
// that sends the same dataset entry many times stores its bytes once.
type BodyRef struct {
	Offset uint64
	Len    uint32
}

// Add appends one request: its record and its rendered body. Record.Index, BodyOffset and
// BodyLen are filled in by Add; the rest is taken as given.
func (w *Writer) Add(r Record, body []byte) error {
	ref, err := w.AddBody(body)
	if err != nil {
		return err
	}
	return w.AddRef(r, ref)
}

// AddBody appends body to the bodies blob and returns where it lies, for AddRef.
func (w *Writer) AddBody(body []byte) (BodyRef, error) {
	if w.err != nil {
		return BodyRef{}, w.err
	}
	if uint64(len(body)) > math.MaxUint32 {
		w.err = fmt.Errorf("mmapds: record %d: body of %d bytes is too large", w.count, len(body))
		return BodyRef{}, w.err
	}
	ref := BodyRef{Offset: w.bodiesLen, Len: uint32(len(body))}
	if _, err := w.bw.Write(body); err != nil {
		w.err = fmt.Errorf("mmapds: %s: %w", w.path, err)
		return BodyRef{}, w.err
	}
	w.bodiesLen += uint64(len(body))
	return ref, nil
}

// AddRef appends a record whose body was written by AddBody. Record.Index, BodyOffset and
// BodyLen are filled in; the rest is taken as given.
func (w *Writer) AddRef(r Record, ref BodyRef) error {
	if w.err != nil {
		return w.err
	}
	if w.count >= math.MaxUint32 {
		w.err = errors.New("mmapds: too many records")
		return w.err
	}
	if ref.Offset > w.bodiesLen || uint64(ref.Len) > w.bodiesLen-ref.Offset {
		w.err = fmt.Errorf("mmapds: record %d: body [%d,+%d) was not written by AddBody", w.count, ref.Offset, ref.Len)
		return w.err
	}
	r.Index = uint32(w.count)
	r.BodyOffset = ref.Offset
	r.BodyLen = ref.Len
	var rec [RecordSize]byte
	putRecord(rec[:], &r)
	w.media = w.media || r.Media != 0
	w.records = append(w.records, rec[:]...)
	w.count++
	return nil
}

// Grow reserves room for n more records, so a writer that knows the plan's size appends
// without reallocating.
func (w *Writer) Grow(n int) {
	if n > 0 {
		w.records = slices.Grow(w.records, n*RecordSize)
	}
}

// Len returns the number of records added so far.
func (w *Writer) Len() int { return int(w.count) }

// Close writes the records, the meta and the header, then hashes the file and appends the
// hash, which it returns. After an error the partial file is removed.
func (w *Writer) Close(m *Meta) (hash [HashSize]byte, err error) {
	defer func() {
		if err != nil {
			w.abort()
		}
	}()
	if w.err != nil {
		return hash, w.err
	}
	meta, err := encodeMeta(m)
	if err != nil {
		return hash, err
	}
	// A plan without media or graph is written as version 1, byte for byte what earlier
	// builds wrote (same hash, readable by them); one with media needs version 2, one with
	// a graph version 3.
	version := uint32(MinVersion)
	if w.media || len(m.Media) > 0 {
		version = 2
	}
	g := &w.graph
	if g.on {
		if g.count != w.count {
			return hash, errGraphRecords
		}
		version = GraphVersion
	} else if len(m.Agents) > 0 {
		return hash, errors.New("mmapds: meta has agents but no record has a graph node")
	}
	h := header{version: version, recordCount: w.count, bodiesOff: HeaderSize, bodiesLen: w.bodiesLen}
	pad := padding(HeaderSize + w.bodiesLen)
	h.recordsOff = HeaderSize + w.bodiesLen + pad
	h.metaOff = h.recordsOff + uint64(len(w.records))
	if g.on {
		h.graphOff = h.metaOff
		h.graphLen = uint64(len(g.nodes) + len(g.edges))
		h.metaOff += h.graphLen
	}
	h.metaLen = uint64(len(meta))
	h.fileLen = h.metaOff + h.metaLen + HashSize
	var zeros [8]byte
	if _, err := w.bw.Write(zeros[:pad]); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if _, err := w.bw.Write(w.records); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if g.on {
		if _, err := w.bw.Write(g.nodes); err != nil {
			return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
		}
		if _, err := w.bw.Write(g.edges); err != nil {
			return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
		}
	}
	if _, err := w.bw.Write(meta); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if err := w.bw.Flush(); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	var hb [HeaderSize]byte
	h.put(hb[:])
	if _, err := w.f.WriteAt(hb[:], 0); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	// The header is written last, so hashing must re-read the file; from the page cache this
	// runs at memory speed and keeps the compiler's memory independent of the plan's size.
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, w.f); err != nil {
		return hash, fmt.Errorf("mmapds: %s: hash: %w", w.path, err)
	}
	copy(hash[:], sum.Sum(nil))
	if _, err := w.f.Write(hash[:]); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if err := w.f.Close(); err != nil {
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if err := os.Chmod(w.tmp, 0o644); err != nil { // CreateTemp made it 0600
		return hash, fmt.Errorf("mmapds: %s: %w", w.path, err)
	}
	if err := os.Rename(w.tmp, w.path); err != nil {
		return hash, fmt.Errorf("mmapds: %w", err)
	}
	w.records, w.graph = nil, graphWriter{}
	return hash, nil
}

// Abort stops writing and removes the partial file.
func (w *Writer) Abort() {
	if w.err == nil {
		w.err = errors.New("mmapds: writer aborted")
	}
	w.abort()
}

func (w *Writer) abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

// padding returns how many zero bytes align n to 8.
func padding(n uint64) uint64 { return (8 - n%8) % 8 }
