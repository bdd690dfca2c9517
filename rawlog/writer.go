package rawlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// Writer appends records to a raw event log. Each frame goes to the underlying writer in one
// Write call, so with an *os.File every completed record is in the kernel as soon as the call
// returns and survives the process being killed. A record longer than FramePayload goes out
// as several consecutive frames (a crash between them leaves a torn final record, which
// readers skip), so the Writer's buffer never holds more than one frame. It is safe for
// concurrent use; encoding reuses that buffer, so steady-state writes allocate nothing.
type Writer struct {
	mu       sync.Mutex
	w        io.Writer
	buf      []byte
	limit    int // payload bytes per frame: FramePayload (tests lower it)
	requests int
	err      error
}

// NewWriter writes the file header and h to w and returns a Writer for the records after it.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	lw := &Writer{w: w, buf: make([]byte, 0, 64<<10), limit: FramePayload}
	var fh [fileHeaderSize]byte
	copy(fh[:], Magic)
	binary.LittleEndian.PutUint32(fh[8:], Version)
	if _, err := w.Write(fh[:]); err != nil {
		return nil, fmt.Errorf("rawlog: write header: %w", err)
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	b := lw.begin()
	b = appendArrayHeader(b, headerFields)
	b = appendInt(b, int64(KindHeader))
	b = appendInt(b, int64(h.Worker))
	b = appendInt(b, int64(h.PID))
	b = appendInt(b, int64(h.CPU))
	b = appendStr(b, h.PlanHash)
	b = appendInt(b, h.StartUnixNs)
	b = appendStr(b, h.PlanPath)
	b = appendInt(b, int64(h.Planned))
	b = appendInt(b, int64(h.Workers))
	return lw, lw.finish(b)
}

// begin returns the buffer with room reserved for the frame header.
func (w *Writer) begin() []byte {
	return append(w.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0)
}

// finish writes b as the record's last frame.
func (w *Writer) finish(b []byte) error {
	b = w.spill(b)
	w.emit(b, false)
	w.buf = b[:0]
	return w.err
}

// emit fills in the frame header of b (header room, then payload) and writes the frame.
func (w *Writer) emit(b []byte, continued bool) {
	if w.err != nil {
		return
	}
	payload := b[frameHeaderSize:]
	size := uint32(len(payload))
	if continued {
		size |= FrameContinued
	}
	binary.LittleEndian.PutUint32(b[0:], size)
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, castagnoli))
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("rawlog: write: %w", err)
	}
}

// spill writes full frames off the front of b while its payload exceeds the frame limit and
// returns the buffer holding the rest (after a new header's room).
func (w *Writer) spill(b []byte) []byte {
	for len(b)-frameHeaderSize > w.limit {
		end := frameHeaderSize + w.limit
		w.emit(b[:end], true)
		n := copy(b[frameHeaderSize:], b[end:])
		b = b[:frameHeaderSize+n]
	}
	return b
}

// appendBulk appends p to the record in b, sending full frames as it goes, so a long field
// never sits in the buffer whole.
func (w *Writer) appendBulk(b, p []byte) []byte {
	for len(p) > 0 {
		b = w.spill(b)
		room := w.limit - (len(b) - frameHeaderSize)
		if room == 0 {
			// A full frame, and more to come: it is not the record's last.
			w.emit(b, true)
			b = b[:frameHeaderSize]
			room = w.limit
		}
		n := min(room, len(p))
		b = append(b, p[:n]...)
		p = p[n:]
	}
	return b
}

// readBlock is how many read-table entries are encoded between checks for a full frame.
const readBlock = 1024

// WriteRequest appends one request record.
func (w *Writer) WriteRequest(r *Request) error {
	if len(r.ReadEnd) != len(r.ReadNs) {
		return fmt.Errorf("rawlog: request %d: %d read times but %d read ends", r.Index, len(r.ReadNs), len(r.ReadEnd))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.begin()
	b = appendArrayHeader(b, requestFields)
	b = appendInt(b, int64(KindRequest))
	b = appendInt(b, int64(r.Index))
	b = appendInt(b, int64(r.Outcome))
	b = appendInt(b, int64(r.Status))
	b = appendBool(b, r.ConnReused)
	b = appendInt(b, r.IntendedNs)
	b = appendInt(b, r.ReadyNs)
	b = appendInt(b, r.WriteStartNs)
	b = appendInt(b, r.WriteEndNs)
	b = appendInt(b, r.HeaderNs)
	b = appendInt(b, r.EndNs)
	// The read table goes in blocks, spilling full frames between them.
	b = appendBinHeader(b, 8*len(r.ReadNs))
	for i := 0; i < len(r.ReadNs); i += readBlock {
		for _, t := range r.ReadNs[i:min(i+readBlock, len(r.ReadNs))] {
			b = binary.LittleEndian.AppendUint64(b, uint64(t))
		}
		b = w.spill(b)
	}
	b = appendBinHeader(b, 4*len(r.ReadEnd))
	for i := 0; i < len(r.ReadEnd); i += readBlock {
		for _, e := range r.ReadEnd[i:min(i+readBlock, len(r.ReadEnd))] {
			b = binary.LittleEndian.AppendUint32(b, e)
		}
		b = w.spill(b)
	}
	b = appendBinHeader(b, len(r.Body))
	b = w.appendBulk(b, r.Body)
	b = appendStr(b, r.Err)
	b = appendInt(b, int64(r.URLIndex))
	b = appendInt(b, r.ConnectStartNs)
	b = appendInt(b, r.ConnectEndNs)
	b = appendInt(b, int64(r.Reconnects))
	b = appendInt(b, r.FirstWriteStartNs)
	b = appendBool(b, r.ServerClosed)
	w.requests++
	return w.finish(b)
}

// WriteSent appends a Sent record. The caller makes it durable (in the kernel) before it
// writes the request, when the underlying writer buffers.
func (w *Writer) WriteSent(s Sent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.begin()
	b = appendArrayHeader(b, sentFields)
	b = appendInt(b, int64(KindSent))
	b = appendInt(b, int64(s.Index))
	b = appendInt(b, s.TimeNs)
	return w.finish(b)
}

// WriteCPU appends a CPU time sample.
func (w *Writer) WriteCPU(s CPUSample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.begin()
	b = appendArrayHeader(b, 4)
	b = appendInt(b, int64(KindCPU))
	b = appendInt(b, s.TimeNs)
	b = appendInt(b, s.UserNs)
	b = appendInt(b, s.SysNs)
	return w.finish(b)
}

// WriteGPU appends a GPU telemetry sample.
func (w *Writer) WriteGPU(s GPUSample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.begin()
	b = appendArrayHeader(b, gpuFields)
	b = appendInt(b, int64(KindGPU))
	b = appendInt(b, s.TimeNs)
	b = appendInt(b, int64(s.GPU))
	b = appendStr(b, s.UUID)
	b = appendInt(b, s.PowerMilliwatts)
	b = appendInt(b, s.EnergyMillijoules)
	b = appendInt(b, s.GPUUtilPct)
	b = appendInt(b, s.MemUtilPct)
	b = appendInt(b, s.MemUsedBytes)
	b = appendInt(b, s.SMClockMHz)
	b = appendInt(b, s.TempC)
	b = appendInt(b, s.PowerInstantMilliwatts)
	return w.finish(b)
}

// Close appends the footer. It does not close the underlying writer. f.Requests is filled in
// with the number of request records written.
func (w *Writer) Close(f Footer) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.begin()
	b = appendArrayHeader(b, 4)
	b = appendInt(b, int64(KindFooter))
	b = appendInt(b, f.TimeNs)
	b = appendInt(b, int64(w.requests))
	b = appendStr(b, f.Status)
	return w.finish(b)
}

// Requests returns how many request records were written.
func (w *Writer) Requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests
}
