package rawlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// Writer appends records to a raw event log. Each record goes to the underlying writer in one
// Write call, so with an *os.File every completed record is in the kernel as soon as the call
// returns and survives the process being killed. It is safe for concurrent use; encoding reuses
// one buffer, so steady-state writes allocate nothing.
type Writer struct {
	mu       sync.Mutex
	w        io.Writer
	buf      []byte
	requests int
	err      error
}

// NewWriter writes the file header and h to w and returns a Writer for the records after it.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	lw := &Writer{w: w, buf: make([]byte, 0, 64<<10)}
	var fh [fileHeaderSize]byte
	copy(fh[:], Magic)
	binary.LittleEndian.PutUint32(fh[8:], Version)
	if _, err := w.Write(fh[:]); err != nil {
		return nil, fmt.Errorf("rawlog: write header: %w", err)
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	b := lw.begin()
	b = appendArrayHeader(b, 6)
	b = appendInt(b, int64(KindHeader))
	b = appendInt(b, int64(h.Worker))
	b = appendInt(b, int64(h.PID))
	b = appendInt(b, int64(h.CPU))
	b = appendStr(b, h.PlanHash)
	b = appendInt(b, h.StartUnixNs)
	return lw, lw.finish(b)
}

// begin returns the buffer with room reserved for the frame header.
func (w *Writer) begin() []byte {
	return append(w.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0)
}

// finish fills in the frame header and writes the frame.
func (w *Writer) finish(b []byte) error {
	w.buf = b[:0]
	if w.err != nil {
		return w.err
	}
	payload := b[frameHeaderSize:]
	binary.LittleEndian.PutUint32(b[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, castagnoli))
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("rawlog: write: %w", err)
	}
	return w.err
}

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
	b = appendBinHeader(b, 8*len(r.ReadNs))
	for _, t := range r.ReadNs {
		b = binary.LittleEndian.AppendUint64(b, uint64(t))
	}
	b = appendBinHeader(b, 4*len(r.ReadEnd))
	for _, e := range r.ReadEnd {
		b = binary.LittleEndian.AppendUint32(b, e)
	}
	b = appendBin(b, r.Body)
	b = appendStr(b, r.Err)
	b = appendInt(b, int64(r.URLIndex))
	b = appendInt(b, r.ConnectStartNs)
	b = appendInt(b, r.ConnectEndNs)
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
