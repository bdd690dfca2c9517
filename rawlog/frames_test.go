package rawlog

import (
	"bytes"
	"encoding/binary"
	"io"
	"reflect"
	"strings"
	"testing"
)

// frameInfo is one frame of a log as the bytes say.
type frameInfo struct {
	off       int
	size      int
	continued bool
}

// framesOf walks the frames of a version 2 log.
func framesOf(t *testing.T, data []byte) []frameInfo {
	t.Helper()
	var fs []frameInfo
	for off := fileHeaderSize; off < len(data); {
		v := binary.LittleEndian.Uint32(data[off:])
		f := frameInfo{off: off, size: int(v &^ FrameContinued), continued: v&FrameContinued != 0}
		fs = append(fs, f)
		off += frameHeaderSize + f.size
		if off > len(data) {
			t.Fatalf("frame at %d runs past the end", f.off)
		}
	}
	return fs
}

// bigRequest has a body of n bytes and reads reads, the body split evenly over them.
func bigRequest(i, n, reads int) *Request {
	q := sampleRequest(i)
	q.Body = make([]byte, n)
	for k := range q.Body {
		q.Body[k] = byte('a' + (k*7+i)%26)
	}
	q.ReadNs = make([]int64, reads)
	q.ReadEnd = make([]uint32, reads)
	for k := range reads {
		q.ReadNs[k] = int64(k)*1000 - 7
		q.ReadEnd[k] = uint32(n * (k + 1) / reads)
	}
	return q
}

// A record longer than the frame limit goes out as several frames, none over the limit, all
// but the last marked continued; readers put it back together exactly. The limit is lowered
// to 64 bytes so a few KiB exercise hundreds of frames, and every boundary case (a field
// ending exactly at a frame's end, an empty body) comes up.
func TestLargeRecordSpansFrames(t *testing.T) {
	const limit = 64
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Worker: 2, PlanHash: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	w.limit = limit
	var want []*Request
	for i, c := range []struct{ body, reads int }{
		{0, 0}, {1, 1}, {limit - 40, 1}, {limit, 2}, {limit + 1, 3}, {3 * limit, 7}, {5000, 300}, {10, 1000},
	} {
		q := bigRequest(i, c.body, c.reads)
		want = append(want, q)
		if err := w.WriteRequest(q); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteCPU(CPUSample{TimeNs: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{Status: StatusComplete}); err != nil {
		t.Fatal(err)
	}
	if c := cap(w.buf); c > 64<<10 {
		t.Fatalf("writer buffer grew to %d bytes with a %d-byte frame limit", c, limit)
	}
	data := buf.Bytes()
	frames := framesOf(t, data)
	continued := 0
	for _, f := range frames {
		if f.size > limit {
			t.Fatalf("frame at %d has %d payload bytes, limit %d", f.off, f.size, limit)
		}
		if f.continued {
			continued++
		}
	}
	if continued < 100 || frames[len(frames)-1].continued {
		t.Fatalf("%d of %d frames continued, last continued=%v", continued, len(frames), frames[len(frames)-1].continued)
	}
	reqs, footer, r := readAll(t, data)
	if r.Torn() != 0 || footer == nil || footer.Requests != len(want) || len(reqs) != len(want) {
		t.Fatalf("torn %d, footer %+v, %d requests", r.Torn(), footer, len(reqs))
	}
	for i := range reqs {
		q, wq := reqs[i], *want[i]
		if len(wq.Body) == 0 {
			wq.Body = nil
			q.Body = nil
		}
		if len(wq.ReadNs) == 0 {
			wq.ReadNs, wq.ReadEnd, q.ReadNs, q.ReadEnd = nil, nil, nil, nil
		}
		if !reflect.DeepEqual(q, wq) {
			t.Fatalf("request %d differs after the round trip: %d body bytes, %d reads", i, len(q.Body), len(q.ReadNs))
		}
	}
}

// At the real frame limit a 3 MiB body spans four frames, and the writer's buffer stays the
// size of one frame, not of the record.
func TestFramePayloadBoundsFrames(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	q := bigRequest(1, 3<<20, 4096)
	if err := w.WriteRequest(q); err != nil {
		t.Fatal(err)
	}
	if c := cap(w.buf); c > FramePayload+frameHeaderSize+16<<10 {
		t.Fatalf("writer buffer is %d bytes for a %d-byte body", c, len(q.Body))
	}
	frames := framesOf(t, buf.Bytes())
	if len(frames) != 1+4 {
		t.Fatalf("%d frames, want the header and 4", len(frames))
	}
	for _, f := range frames {
		if f.size > FramePayload || f.size > MaxFrame {
			t.Fatalf("frame of %d bytes", f.size)
		}
	}
	reqs, _, _ := readAll(t, buf.Bytes())
	if len(reqs) != 1 || !bytes.Equal(reqs[0].Body, q.Body) || !reflect.DeepEqual(reqs[0].ReadEnd, q.ReadEnd) {
		t.Fatalf("3 MiB record did not round-trip")
	}
	// Writing it again allocates nothing: the buffer is already a frame's size. Measured on
	// a writer to io.Discard, because a bytes.Buffer destination grows (and allocates) as the
	// 3 MiB records pile up, which is the destination's cost, not the writer's.
	wd, err := NewWriter(io.Discard, Header{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wd.WriteRequest(q); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { wd.WriteRequest(q) }); n != 0 {
		t.Fatalf("%v allocations per multi-frame record", n)
	}
}

// A crash in the middle of a multi-frame record leaves its frames cut short or missing: the
// reader treats the whole record as torn and keeps every record before it.
func TestTornMultiFrameRecord(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{})
	if err != nil {
		t.Fatal(err)
	}
	w.limit = 64
	for i := range 3 {
		w.WriteRequest(sampleRequest(i))
	}
	before := buf.Len()
	w.WriteRequest(bigRequest(9, 500, 20))
	full := buf.Bytes()
	for cut := before + 1; cut < len(full); cut++ {
		reqs, _, r := readAll(t, full[:cut])
		if len(reqs) != 3 {
			t.Fatalf("cut at %d: %d requests, want the 3 before the torn one", cut, len(reqs))
		}
		if r.Torn() != int64(cut-before) {
			t.Fatalf("cut at %d: torn %d bytes, want %d", cut, r.Torn(), cut-before)
		}
	}
	// A damaged continued frame with records after it is corruption, not a torn end.
	bad := bytes.Clone(full)
	bad[before+frameHeaderSize+3] ^= 0xff
	bad = append(bad, full[fileHeaderSize:before]...)
	r, err := NewReader(bytes.NewReader(bad), "bad")
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.Next()
		if err == io.EOF {
			t.Fatal("damage inside a multi-frame record was not reported")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("error %v", err)
			}
			break
		}
	}
}

// Version 1 logs (one frame per record, no continuation bit) are still read; in them a
// length with bit 31 set is an impossible length, never a continuation.
func TestReadsVersion1(t *testing.T) {
	data := writeLog(t, 5, true)
	binary.LittleEndian.PutUint32(data[8:], 1)
	reqs, footer, _ := readAll(t, data)
	if len(reqs) != 5 || footer == nil {
		t.Fatalf("version 1 log: %d requests, footer %v", len(reqs), footer)
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{})
	w.limit = 64
	w.WriteRequest(bigRequest(1, 300, 3))
	w.WriteCPU(CPUSample{})
	v1 := buf.Bytes()
	binary.LittleEndian.PutUint32(v1[8:], 1)
	r, err := NewReader(bytes.NewReader(v1), "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "frame length") {
		t.Fatalf("continued frame in a version 1 log: %v", err)
	}
}
