package mmapds

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/edsrzf/mmap-go"
)

// ErrFormat is wrapped by every error about a file that is not a valid plan file.
var ErrFormat = errors.New("not a valid plan file")

// Options tune Open.
type Options struct {
	// SkipHash skips recomputing the SHA-256 of the whole file (fast mode). The stored hash is
	// still reported by Hash; every offset is still checked.
	SkipHash bool
}

// Plan is an open plan file, mapped read-only. Its methods allocate nothing, and it is safe for
// concurrent use by many goroutines until Close.
type Plan struct {
	path    string
	m       mmap.MMap
	data    []byte
	h       header
	records []byte
	bodies  []byte
	meta    *Meta
	hash    [HashSize]byte
	graph   []byte // node table (NodeSize per record); nil without a graph section
	edges   []byte // edge table
}

// Open maps the plan file at path and checks its header, section offsets and (unless
// opts.SkipHash) its hash. Apart from the hash check, the work is independent of the number of
// records.
func Open(path string, opts Options) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mmapds: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mmapds: %w", err)
	}
	if st.Size() < HeaderSize+HashSize {
		return nil, fmt.Errorf("mmapds: %s: %w: %d bytes is shorter than a header", path, ErrFormat, st.Size())
	}
	m, err := mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("mmapds: %s: map: %w", path, err)
	}
	p, err := fromBytes(path, m, opts)
	if err != nil {
		m.Unmap()
		return nil, err
	}
	p.m = m
	return p, nil
}

// FromBytes interprets data, which must stay unchanged while the Plan is used, as a plan file.
// It is Open without the file, for tests and fuzzing.
func FromBytes(data []byte, opts Options) (*Plan, error) {
	return fromBytes("plan", data, opts)
}

func fromBytes(path string, data []byte, opts Options) (*Plan, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("mmapds: %s: %w: %s", path, ErrFormat, fmt.Sprintf(format, args...))
	}
	if len(data) < HeaderSize+HashSize {
		return nil, bad("%d bytes is shorter than a header", len(data))
	}
	if !bytes.Equal(data[:8], []byte(Magic)) {
		return nil, bad("bad magic %q", data[:8])
	}
	le := binary.LittleEndian
	h := header{
		version:     le.Uint32(data[8:]),
		recordCount: le.Uint64(data[24:]),
		bodiesOff:   le.Uint64(data[32:]),
		bodiesLen:   le.Uint64(data[40:]),
		recordsOff:  le.Uint64(data[48:]),
		metaOff:     le.Uint64(data[56:]),
		metaLen:     le.Uint64(data[64:]),
		fileLen:     le.Uint64(data[72:]),
		graphOff:    le.Uint64(data[80:]),
		graphLen:    le.Uint64(data[88:]),
	}
	if h.version < MinVersion || h.version > Version {
		return nil, fmt.Errorf("mmapds: %s: plan format version %d is not supported (this build reads versions %d to %d)", path, h.version, MinVersion, Version)
	}
	if hs, rs := le.Uint32(data[12:]), le.Uint32(data[16:]); hs != HeaderSize || rs != RecordSize {
		return nil, bad("header size %d / record size %d, want %d / %d", hs, rs, HeaderSize, RecordSize)
	}
	size := uint64(len(data))
	if h.fileLen != size {
		return nil, bad("header says %d bytes, file has %d (truncated?)", h.fileLen, size)
	}
	end := size - HashSize
	if h.bodiesOff != HeaderSize || h.bodiesLen > end-h.bodiesOff {
		return nil, bad("bodies section [%d,+%d) outside the file", h.bodiesOff, h.bodiesLen)
	}
	if h.recordCount > (end-h.bodiesOff)/RecordSize {
		return nil, bad("record count %d does not fit the file", h.recordCount)
	}
	recLen := h.recordCount * RecordSize
	if h.recordsOff < h.bodiesOff+h.bodiesLen || h.recordsOff > end || recLen > end-h.recordsOff {
		return nil, bad("records section [%d,+%d) outside the file", h.recordsOff, recLen)
	}
	recEnd := h.recordsOff + recLen
	switch {
	case h.version < GraphVersion && (h.graphOff != 0 || h.graphLen != 0):
		return nil, bad("version %d header has graph section bytes set", h.version)
	case h.version >= GraphVersion && (h.graphOff != recEnd || h.graphLen > end-recEnd):
		return nil, bad("graph section [%d,+%d) does not follow the records at %d", h.graphOff, h.graphLen, recEnd)
	case h.version >= GraphVersion:
		recEnd += h.graphLen
	}
	if h.metaOff != recEnd || h.metaLen != end-h.metaOff {
		return nil, bad("meta section [%d,+%d) does not end at the hash", h.metaOff, h.metaLen)
	}
	p := &Plan{path: path, data: data, h: h}
	copy(p.hash[:], data[end:])
	if !opts.SkipHash {
		if sum := sha256.Sum256(data[:end]); sum != p.hash {
			return nil, bad("content hash mismatch (stored %x, computed %x): the file is corrupt", p.hash[:6], sum[:6])
		}
	}
	p.bodies = data[h.bodiesOff : h.bodiesOff+h.bodiesLen]
	p.records = data[h.recordsOff : h.recordsOff+recLen]
	if h.version >= GraphVersion {
		nodes, edges, err := splitGraph(data[h.graphOff:h.graphOff+h.graphLen], h.recordCount)
		if err != nil {
			return nil, bad("%v", err)
		}
		p.graph, p.edges = nodes, edges
	}
	meta, err := decodeMeta(data[h.metaOff : h.metaOff+h.metaLen])
	if err != nil {
		return nil, bad("%v", err)
	}
	p.meta = meta
	return p, nil
}

// Close unmaps the file. Slices returned by Body must not be used afterwards.
func (p *Plan) Close() error {
	if p.m == nil {
		return nil
	}
	err := p.m.Unmap()
	p.m = nil
	return err
}

// Len returns the number of records.
func (p *Plan) Len() int { return int(p.h.recordCount) }

// Hash returns the plan's identity: the SHA-256 of every byte before the trailer.
func (p *Plan) Hash() [HashSize]byte { return p.hash }

// HashHex returns Hash as lower-case hex.
func (p *Plan) HashHex() string { return hex.EncodeToString(p.hash[:]) }

// Meta returns the plan-wide metadata. Callers must not modify it.
func (p *Plan) Meta() *Meta { return p.meta }

// Size returns the file's size in bytes.
func (p *Plan) Size() int64 { return int64(len(p.data)) }

// Record returns the i-th record and its body, a slice of the mapping. It fails when i is out
// of range or the record points outside the bodies section or at an unknown path.
func (p *Plan) Record(i int) (Record, []byte, error) {
	if i < 0 || uint64(i) >= p.h.recordCount {
		return Record{}, nil, fmt.Errorf("mmapds: %s: record %d out of range [0,%d)", p.path, i, p.h.recordCount)
	}
	r := getRecord(p.records[i*RecordSize : (i+1)*RecordSize])
	if r.BodyOffset > uint64(len(p.bodies)) || uint64(r.BodyLen) > uint64(len(p.bodies))-r.BodyOffset {
		return r, nil, fmt.Errorf("mmapds: %s: %w: record %d body [%d,+%d) outside the bodies section", p.path, ErrFormat, i, r.BodyOffset, r.BodyLen)
	}
	if int(r.PathID) >= len(p.meta.Paths) {
		return r, nil, fmt.Errorf("mmapds: %s: %w: record %d path id %d, plan has %d paths", p.path, ErrFormat, i, r.PathID, len(p.meta.Paths))
	}
	return r, p.bodies[r.BodyOffset : r.BodyOffset+uint64(r.BodyLen) : r.BodyOffset+uint64(r.BodyLen)], nil
}

// Validate checks every record (bounds, index, phase, send offset, cancel-after) and the
// graph section (graph.go), which Open leaves to Record to keep opening independent of the
// plan's size. Readers that index
// per-request state by Record.Index (replay, analyze) call it first: an index that is not its
// record number would be out of range or counted twice.
func (p *Plan) Validate() error {
	for i := 0; i < p.Len(); i++ {
		r, _, err := p.Record(i)
		if err != nil {
			return err
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("mmapds: %s: %w: record %d %s", p.path, ErrFormat, i, fmt.Sprintf(format, args...))
		}
		switch {
		case int(r.Index) != i:
			return bad("has index %d", r.Index)
		case r.Phase != PhaseWarmup && r.Phase != PhaseProfile:
			return bad("has unknown phase %d", r.Phase)
		case r.SendOffsetNs < 0 && r.SendOffsetNs != NoSendOffset:
			return bad("has negative send offset %d", r.SendOffsetNs)
		case r.CancelAfterNs < 0:
			return bad("has negative cancel-after %d", r.CancelAfterNs)
		case int64(r.Media) > int64(len(p.meta.Media)):
			return bad("has media entry %d, plan has %d", r.Media, len(p.meta.Media))
		}
	}
	return p.validateGraph()
}

// ErrChanged is wrapped by the error FaultError returns: the file was truncated while mapped.
var ErrChanged = errors.New("plan file truncated or rewritten while in use")

// FaultError turns v, a value recovered from a panic, into an error when it is a memory fault
// on p's mapping, and returns nil for anything else (which the caller panics with again).
// Reading a mapped page past the end of a file that was truncated after it was mapped (as
// `cp` over it does) raises SIGBUS; a goroutine that runs with debug.SetPanicOnFault(true)
// gets a panic instead, whose value FaultError recognises by its address.
func (p *Plan) FaultError(v any) error {
	e, ok := v.(interface{ Addr() uintptr })
	if !ok || len(p.data) == 0 {
		return nil
	}
	// Only the address is compared: nothing is read through it.
	base := uintptr(unsafe.Pointer(unsafe.SliceData(p.data)))
	addr := e.Addr()
	if addr < base || addr-base >= uintptr(len(p.data)) {
		return nil
	}
	return fmt.Errorf("mmapds: %s: %w: reading byte %d of %d faulted (was it copied over or truncated during the run?)", p.path, ErrChanged, addr-base, len(p.data))
}
