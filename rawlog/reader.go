package rawlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
)

// ErrFormat is wrapped by every error about bytes that are not a valid raw log.
var ErrFormat = errors.New("not a valid raw event log")

// ErrNoHeader is wrapped (with ErrFormat) when a log ends before its header record is
// complete: a file cut short by a crash of its writer before anything else was written.
var ErrNoHeader = errors.New("log ends before its header record")

// Reader reads a raw event log record by record. Values returned by Request alias internal
// buffers and stay valid until the next call to Next.
type Reader struct {
	name   string
	br     *bufio.Reader
	off    int64
	buf    []byte
	header Header
	// version is the log's format version; FrameContinued means something from 2 on.
	version uint32
	kind    Kind
	req     Request
	cpu     CPUSample
	gpu     GPUSample
	footer  Footer
	sent    Sent
	torn    int64
	closer  io.Closer
}

// Open opens the log file at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rawlog: %w", err)
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the file header and the header record from rd. name is used in errors.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	r := &Reader{name: name, br: bufio.NewReaderSize(rd, 256<<10)}
	var fh [fileHeaderSize]byte
	if n, err := io.ReadFull(r.br, fh[:]); err != nil {
		if k := min(n, len(Magic)); string(fh[:k]) == Magic[:k] {
			return nil, fmt.Errorf("rawlog: %s: %w: %w: file header: %v", name, ErrFormat, ErrNoHeader, err)
		}
		return nil, fmt.Errorf("rawlog: %s: %w: file header: %v", name, ErrFormat, err)
	}
	if string(fh[:8]) != Magic {
		return nil, fmt.Errorf("rawlog: %s: %w: bad magic %q", name, ErrFormat, fh[:8])
	}
	r.version = binary.LittleEndian.Uint32(fh[8:])
	if r.version < minVersion || r.version > Version {
		return nil, fmt.Errorf("rawlog: %s: raw log format version %d is not supported (this build reads versions %d to %d)", name, r.version, minVersion, Version)
	}
	r.off = fileHeaderSize
	k, err := r.Next()
	if err == nil && k != KindHeader {
		err = fmt.Errorf("rawlog: %s: %w: first record is kind %d, want a header", name, ErrFormat, k)
	}
	if err == io.EOF {
		err = fmt.Errorf("rawlog: %s: %w: %w", name, ErrFormat, ErrNoHeader)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Header returns the log's header record.
func (r *Reader) Header() Header { return r.header }

// Request returns the request record Next just read.
func (r *Reader) Request() *Request { return &r.req }

// CPU returns the CPU sample Next just read.
func (r *Reader) CPU() CPUSample { return r.cpu }

// GPU returns the GPU sample Next just read.
func (r *Reader) GPU() GPUSample { return r.gpu }

// Sent returns the Sent record Next just read.
func (r *Reader) Sent() Sent { return r.sent }

// Footer returns the footer Next just read.
func (r *Reader) Footer() Footer { return r.footer }

// Torn returns the size of a torn final frame that Next skipped (a crash mid-write), or 0.
func (r *Reader) Torn() int64 { return r.torn }

// Next reads the next record and returns its kind, or io.EOF after the last complete record.
// A torn final record (its frames cut short by a crash) ends the log like EOF (see Torn);
// damage before the end is an error naming the offset. Records of kinds this version does not
// know are returned undecoded.
func (r *Reader) Next() (Kind, error) {
	at := r.off
	payload := r.buf[:0]
	var read int64 // bytes of this record's frames consumed so far
	for {
		var fh [frameHeaderSize]byte
		n, err := io.ReadFull(r.br, fh[:])
		if err == io.EOF && read == 0 {
			return 0, io.EOF
		}
		if err != nil {
			r.torn = read + int64(n)
			return 0, io.EOF
		}
		size := binary.LittleEndian.Uint32(fh[:4])
		sum := binary.LittleEndian.Uint32(fh[4:])
		more := false
		if r.version >= 2 {
			more = size&FrameContinued != 0
			size &^= FrameContinued
		}
		if size > MaxFrame {
			return r.tornOrCorrupt(read+int64(n), at+read, fmt.Sprintf("frame length %d", size))
		}
		if int64(len(payload))+int64(size) > MaxRecord {
			return r.tornOrCorrupt(read+int64(n), at+read, fmt.Sprintf("record longer than %d bytes", int64(MaxRecord)))
		}
		have := len(payload)
		var m int
		payload, m, err = readAppend(r.br, payload, int(size))
		if err != nil {
			r.buf = payload[:0]
			r.torn = read + int64(n+m)
			return 0, io.EOF
		}
		if crc32.Checksum(payload[have:], castagnoli) != sum {
			r.buf = payload[:0]
			return r.tornOrCorrupt(read+int64(n+m), at+read, "checksum mismatch")
		}
		read += int64(n + m)
		if !more {
			break
		}
	}
	r.buf = payload[:0]
	r.off += read
	d := decoder{b: payload}
	fields := d.arrayLen()
	if d.err == nil && fields == 0 {
		d.fail(errors.New("empty record array"))
	}
	if d.err == nil {
		r.kind = Kind(d.int())
	}
	if d.err == nil {
		r.decode(&d, fields)
	}
	if d.err != nil {
		return 0, fmt.Errorf("rawlog: %s: %w: record at offset %d: %v", r.name, ErrFormat, at, d.err)
	}
	return r.kind, nil
}

// tornOrCorrupt decides whether a bad frame (at offset off, read bytes into its record) is the
// torn end of a crashed log (nothing follows it) or damage in the middle (an error).
func (r *Reader) tornOrCorrupt(read, off int64, what string) (Kind, error) {
	if _, err := r.br.Peek(1); err == io.EOF {
		// Count what is left of the frame so callers can report it.
		rest, _ := io.Copy(io.Discard, r.br)
		r.torn = read + rest
		return 0, io.EOF
	}
	return 0, fmt.Errorf("rawlog: %s: %w: frame at offset %d: %s", r.name, ErrFormat, off, what)
}

// decode reads the record's fields; n is its array length, kind included. Elements past the
// ones this version knows are ignored (a later writer may append fields); fields a shorter
// array lacks get their documented defaults.
func (r *Reader) decode(d *decoder, n int) {
	switch r.kind {
	case KindHeader:
		r.header = Header{Worker: int(d.int()), PID: int(d.int()), CPU: int(d.int()), PlanHash: d.str(), StartUnixNs: d.int(),
			Planned: -1, Workers: -1}
		if n >= headerFields {
			r.header.PlanPath, r.header.Planned, r.header.Workers = d.str(), int(d.int()), int(d.int())
		}
	case KindRequest:
		q := &r.req
		q.Index = uint32(d.int())
		q.Outcome = Outcome(d.int())
		q.Status = int(d.int())
		q.ConnReused = d.bool()
		q.IntendedNs = d.int()
		q.ReadyNs = d.int()
		q.WriteStartNs = d.int()
		q.WriteEndNs = d.int()
		q.HeaderNs = d.int()
		q.EndNs = d.int()
		times := d.raw()
		ends := d.raw()
		q.Body = d.raw()
		q.Err = d.str()
		q.URLIndex, q.ConnectStartNs, q.ConnectEndNs = 0, -1, -1
		q.Reconnects, q.FirstWriteStartNs, q.ServerClosed = 0, -1, false
		if n >= requestFieldsConnect {
			q.URLIndex = int(d.int())
			q.ConnectStartNs = d.int()
			q.ConnectEndNs = d.int()
		}
		if n >= requestFields {
			q.Reconnects = int(d.int())
			q.FirstWriteStartNs = d.int()
			q.ServerClosed = d.bool()
		}
		if d.err != nil {
			return
		}
		if len(times)%8 != 0 || len(ends)%4 != 0 || len(times)/8 != len(ends)/4 {
			d.fail(fmt.Errorf("request %d: %d bytes of read times and %d of read ends do not pair up", q.Index, len(times), len(ends)))
			return
		}
		q.ReadNs = q.ReadNs[:0]
		for i := 0; i < len(times); i += 8 {
			q.ReadNs = append(q.ReadNs, int64(binary.LittleEndian.Uint64(times[i:])))
		}
		q.ReadEnd = q.ReadEnd[:0]
		prev := uint32(0)
		for i := 0; i < len(ends); i += 4 {
			e := binary.LittleEndian.Uint32(ends[i:])
			if e < prev || int(e) > len(q.Body) {
				d.fail(fmt.Errorf("request %d: read end %d out of order or past the body (%d bytes)", q.Index, e, len(q.Body)))
				return
			}
			prev = e
			q.ReadEnd = append(q.ReadEnd, e)
		}
	case KindCPU:
		r.cpu = CPUSample{TimeNs: d.int(), UserNs: d.int(), SysNs: d.int()}
	case KindGPU:
		r.gpu = GPUSample{TimeNs: d.int(), GPU: int(d.int()), UUID: d.str(), PowerMilliwatts: d.int(),
			EnergyMillijoules: d.int(), GPUUtilPct: d.int(), MemUtilPct: d.int(), MemUsedBytes: d.int(),
			SMClockMHz: d.int(), TempC: d.int(), PowerInstantMilliwatts: -1}
		if n >= gpuFields {
			r.gpu.PowerInstantMilliwatts = d.int()
		}
	case KindFooter:
		r.footer = Footer{TimeNs: d.int(), Requests: int(d.int()), Status: d.str()}
	case KindSent:
		r.sent = Sent{Index: uint32(d.int()), TimeNs: d.int()}
	}
}

// readAppend appends n bytes read from br to b. It grows b a MiB at a time as bytes arrive, so
// a damaged length field costs no more memory than the bytes actually there.
func readAppend(br *bufio.Reader, b []byte, n int) ([]byte, int, error) {
	got := 0
	for got < n {
		step := min(n-got, 1<<20)
		have := len(b)
		b = slices.Grow(b, step)[:have+step]
		m, err := io.ReadFull(br, b[have:])
		got += m
		if err != nil {
			return b[:have+m], got, err
		}
	}
	return b, got, nil
}
