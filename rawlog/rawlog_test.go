package rawlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func sampleRequest(i int) *Request {
	return &Request{
		Index: uint32(i), Outcome: OutcomeCompleted, Status: 200, ConnReused: i%2 == 0,
		IntendedNs: int64(i) * 1e6, ReadyNs: int64(i)*1e6 + 5, WriteStartNs: int64(i)*1e6 + 10,
		WriteEndNs: int64(i)*1e6 + 20, HeaderNs: 3e9, EndNs: 1 << 40,
		ReadNs:   []int64{100, 200, -1 << 40},
		ReadEnd:  []uint32{5, 5, 11},
		Body:     []byte("hello world"),
		Err:      strings.Repeat("e", i),
		URLIndex: i % 3, ConnectStartNs: -1, ConnectEndNs: int64(i) - 1,
		Reconnects: i % 2, FirstWriteStartNs: int64(i)*1e6 + 7, ServerClosed: i%3 == 0,
	}
}

func writeLog(t testing.TB, n int, footer bool) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Worker: 3, PID: 99, CPU: 1, PlanHash: "abc", StartUnixNs: 1700000000e9})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := w.WriteRequest(sampleRequest(i)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteCPU(CPUSample{TimeNs: int64(i), UserNs: 7, SysNs: 8}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteGPU(GPUSample{TimeNs: 1, GPU: 0, UUID: "GPU-x", PowerMilliwatts: 700000, EnergyMillijoules: -1, TempC: 40, PowerInstantMilliwatts: 712000}); err != nil {
		t.Fatal(err)
	}
	if footer {
		if err := w.Close(Footer{TimeNs: 9, Status: StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func readAll(t *testing.T, data []byte) (reqs []Request, footer *Footer, r *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), "test")
	if err != nil {
		t.Fatal(err)
	}
	for {
		k, err := r.Next()
		if err == io.EOF {
			return reqs, footer, r
		}
		if err != nil {
			t.Fatal(err)
		}
		switch k {
		case KindRequest:
			q := *r.Request()
			q.ReadNs = append([]int64(nil), q.ReadNs...)
			q.ReadEnd = append([]uint32(nil), q.ReadEnd...)
			q.Body = append([]byte(nil), q.Body...)
			reqs = append(reqs, q)
		case KindFooter:
			f := r.Footer()
			footer = &f
		}
	}
}

func TestRoundTrip(t *testing.T) {
	data := writeLog(t, 40, true)
	reqs, footer, r := readAll(t, data)
	if h := r.Header(); h.Worker != 3 || h.PlanHash != "abc" || h.StartUnixNs != 1700000000e9 {
		t.Fatalf("header %+v", h)
	}
	if len(reqs) != 40 || footer == nil || footer.Requests != 40 || footer.Status != StatusComplete {
		t.Fatalf("got %d requests, footer %+v", len(reqs), footer)
	}
	for i, q := range reqs {
		want := sampleRequest(i)
		if want.Err == "" {
			want.Err = ""
		}
		if !reflect.DeepEqual(&q, want) {
			t.Fatalf("request %d:\n got %+v\nwant %+v", i, q, *want)
		}
	}
}

func TestTornFinalFrame(t *testing.T) {
	full := writeLog(t, 10, false)
	boundary := map[int]bool{}
	for off := fileHeaderSize; off < len(full); {
		boundary[off] = true
		off += frameHeaderSize + int(binary.LittleEndian.Uint32(full[off:]))
	}
	for cut := 1; cut < 60; cut++ {
		reqs, _, r := readAll(t, full[:len(full)-cut])
		if len(reqs) < 9 {
			t.Fatalf("cut %d: only %d requests survived", cut, len(reqs))
		}
		if r.Torn() == 0 && !boundary[len(full)-cut] {
			t.Fatalf("cut %d: torn frame not reported", cut)
		}
	}
}

func TestCorruptMiddleIsAnError(t *testing.T) {
	data := writeLog(t, 10, true)
	data[fileHeaderSize+40] ^= 0xff
	r, err := NewReader(bytes.NewReader(data), "test")
	if err == nil {
		for err == nil {
			_, err = r.Next()
		}
	}
	if err == io.EOF || !errors.Is(err, ErrFormat) {
		t.Fatalf("corruption in the middle not reported: %v", err)
	}
}

func TestRejectsForeignFiles(t *testing.T) {
	data := writeLog(t, 1, true)
	future := bytes.Clone(data)
	future[8] = Version + 1
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":   {nil, "file header"},
		"magic":   {[]byte("LLMPLAN\x00\x01\x00\x00\x00\x00\x00\x00\x00"), "bad magic"},
		"version": {future, "version 3 is not supported (this build reads versions 1 to 2)"},
		"zero":    {append(append([]byte(Magic), 0, 0, 0, 0), data[12:]...), "version 0 is not supported"},
	} {
		_, err := NewReader(bytes.NewReader(c.data), "f")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// The payloads must be standard msgpack, readable by any library.
func TestPayloadIsStandardMsgpack(t *testing.T) {
	data := writeLog(t, 1, true)
	payload := data[fileHeaderSize+frameHeaderSize:]
	size := int(data[fileHeaderSize]) | int(data[fileHeaderSize+1])<<8
	var v []any
	if err := msgpack.Unmarshal(payload[:size], &v); err != nil {
		t.Fatal(err)
	}
	if len(v) != headerFields || v[4] != "abc" {
		t.Fatalf("header decoded by msgpack library as %v", v)
	}
}

func TestWriteRequestAllocatesNothing(t *testing.T) {
	w, err := NewWriter(io.Discard, Header{})
	if err != nil {
		t.Fatal(err)
	}
	q := sampleRequest(3)
	if n := testing.AllocsPerRun(100, func() { w.WriteRequest(q) }); n != 0 {
		t.Fatalf("WriteRequest allocates %v per call", n)
	}
}

// Sent records round-trip, decode with a standard msgpack library, are skipped by readers
// that only look for requests, and cost no allocation to write.
func TestSentRecord(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Worker: 1, PlanHash: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	sent := []Sent{{Index: 0, TimeNs: -5}, {Index: 7, TimeNs: 1 << 40}, {Index: 1<<32 - 1, TimeNs: 0}}
	for i, s := range sent {
		if err := w.WriteSent(s); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := w.WriteRequest(sampleRequest(7)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close(Footer{Status: StatusComplete})
	data := buf.Bytes()
	r, err := NewReader(bytes.NewReader(data), "t")
	if err != nil {
		t.Fatal(err)
	}
	var got []Sent
	kinds := map[Kind]int{}
	for {
		k, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds[k]++
		if k == KindSent {
			got = append(got, r.Sent())
		}
	}
	if !reflect.DeepEqual(got, sent) || kinds[KindRequest] != 1 || kinds[KindFooter] != 1 {
		t.Fatalf("sent %+v, kinds %v", got, kinds)
	}
	// The frame after the header is the first Sent record: [6, 0, -5].
	off := fileHeaderSize
	off += frameHeaderSize + int(binary.LittleEndian.Uint32(data[off:]))
	size := int(binary.LittleEndian.Uint32(data[off:]))
	var v []int64
	if err := msgpack.Unmarshal(data[off+frameHeaderSize:off+frameHeaderSize+size], &v); err != nil || !reflect.DeepEqual(v, []int64{6, 0, -5}) {
		t.Fatalf("Sent record decoded by msgpack library as %v (%v)", v, err)
	}
	if s, err := Summarize(writeTemp(t, data)); err != nil || s.Requests != 1 || s.Footer == nil {
		t.Fatalf("summary %+v %v", s, err)
	}
	lw, _ := NewWriter(io.Discard, Header{})
	if n := testing.AllocsPerRun(100, func() { lw.WriteSent(Sent{Index: 3, TimeNs: 9}) }); n != 0 {
		t.Fatalf("WriteSent allocates %v per call", n)
	}
}

func writeTemp(t *testing.T, data []byte) string {
	path := filepath.Join(t.TempDir(), "w.rawlog")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A log cut before its header record is complete (its writer died first) is told apart from
// a foreign or damaged file: it wraps ErrNoHeader as well as ErrFormat.
func TestNoHeader(t *testing.T) {
	full := writeLog(t, 1, true)
	headerEnd := fileHeaderSize + frameHeaderSize + int(binary.LittleEndian.Uint32(full[fileHeaderSize:]))
	for _, c := range []struct {
		name     string
		data     []byte
		noHeader bool
	}{
		{"empty", nil, true},
		{"part of the magic", full[:5], true},
		{"part of the version", full[:10], true},
		{"file header only", full[:fileHeaderSize], true},
		{"torn header record", full[:headerEnd-1], true},
		{"short foreign file", []byte("GIF89a"), false},
		{"bad magic", append([]byte("LLMPLAN\x00"), full[8:]...), false},
		{"complete", full[:headerEnd], false},
	} {
		_, err := NewReader(bytes.NewReader(c.data), "f")
		if got := errors.Is(err, ErrNoHeader); got != c.noHeader || (c.noHeader && !errors.Is(err, ErrFormat)) {
			t.Errorf("%s: error %v, want ErrNoHeader %v", c.name, err, c.noHeader)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add(writeLog(f, 3, true))
	f.Add(writeLog(f, 1, false)[:40])
	var sent bytes.Buffer
	if w, err := NewWriter(&sent, Header{Worker: 1}); err == nil {
		w.WriteSent(Sent{Index: 4, TimeNs: 77})
		w.WriteRequest(sampleRequest(4))
	}
	f.Add(sent.Bytes())
	var multi bytes.Buffer
	if w, err := NewWriter(&multi, Header{Worker: 1}); err == nil {
		w.limit = 32 // a record over several frames
		w.WriteRequest(sampleRequest(40))
	}
	f.Add(multi.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

func BenchmarkWriteRequest(b *testing.B) {
	w, _ := NewWriter(io.Discard, Header{})
	q := sampleRequest(1)
	q.Body = bytes.Repeat([]byte("data: {\"x\":1}\n\n"), 128)
	q.ReadNs = make([]int64, 128)
	q.ReadEnd = make([]uint32, 128)
	for i := range q.ReadEnd {
		q.ReadEnd[i] = uint32(i * 15)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.WriteRequest(q)
	}
}

// A Request record written before URLIndex and the connect times existed (15 elements)
// still decodes, with the documented defaults; elements a later writer appends are skipped.
func TestRequestRecordLengths(t *testing.T) {
	frame := func(payload []byte) []byte {
		var b []byte
		b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
		return append(b, payload...)
	}
	req := func(n int) []byte {
		b := appendArrayHeader(nil, n)
		b = appendInt(b, int64(KindRequest))
		for _, v := range []int64{7, int64(OutcomeCompleted), 200} {
			b = appendInt(b, v)
		}
		b = appendBool(b, true)
		for _, v := range []int64{1, 2, 3, 4, 5, 6} {
			b = appendInt(b, v)
		}
		b = appendBin(b, binary.LittleEndian.AppendUint64(nil, 5))
		b = appendBin(b, binary.LittleEndian.AppendUint32(nil, 2))
		b = appendBin(b, []byte("hi"))
		b = appendStr(b, "")
		if n >= 18 {
			b = appendInt(b, 2)
			b = appendInt(b, 10)
			b = appendInt(b, 11)
		}
		if n >= 21 {
			b = appendInt(b, 1)
			b = appendInt(b, 9)
			b = appendBool(b, true)
		}
		known := 18
		if n >= 21 {
			known = 21
		}
		for i := known; i < n; i++ {
			b = appendStr(b, "future field")
		}
		return b
	}
	var head bytes.Buffer
	if _, err := NewWriter(&head, Header{Worker: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fields             int
		url                int
		connStart, connEnd int64
		reconnects         int
		firstWrite         int64
		serverClosed       bool
	}{{15, 0, -1, -1, 0, -1, false}, {18, 2, 10, 11, 0, -1, false}, {20, 2, 10, 11, 0, -1, false},
		{21, 2, 10, 11, 1, 9, true}, {23, 2, 10, 11, 1, 9, true}} {
		data := append(bytes.Clone(head.Bytes()), frame(req(c.fields))...)
		reqs, _, _ := readAll(t, data)
		if len(reqs) != 1 {
			t.Fatalf("%d fields: %d requests", c.fields, len(reqs))
		}
		q := reqs[0]
		if q.Index != 7 || q.EndNs != 6 || string(q.Body) != "hi" || q.URLIndex != c.url || q.ConnectStartNs != c.connStart || q.ConnectEndNs != c.connEnd ||
			q.Reconnects != c.reconnects || q.FirstWriteStartNs != c.firstWrite || q.ServerClosed != c.serverClosed {
			t.Fatalf("%d fields: %+v", c.fields, q)
		}
	}
	// A GPU sample from before PowerInstantMilliwatts (11 elements) decodes it as -1.
	gpu := appendArrayHeader(nil, 11)
	for _, v := range []int64{int64(KindGPU), 5, 0} {
		gpu = appendInt(gpu, v)
	}
	gpu = appendStr(gpu, "GPU-x")
	for _, v := range []int64{700000, 1, 2, 3, 4, 5, 6} {
		gpu = appendInt(gpu, v)
	}
	r, err := NewReader(bytes.NewReader(append(bytes.Clone(head.Bytes()), frame(gpu)...)), "t")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := r.Next(); err != nil || k != KindGPU || r.GPU().PowerInstantMilliwatts != -1 || r.GPU().TempC != 6 || r.GPU().UUID != "GPU-x" {
		t.Fatalf("old GPU sample: %v %v %+v", k, err, r.GPU())
	}
	if _, _, err := func() ([]Request, *Footer, error) {
		data := append(bytes.Clone(head.Bytes()), frame([]byte{0x90})...)
		r, err := NewReader(bytes.NewReader(data), "t")
		if err != nil {
			return nil, nil, err
		}
		_, err = r.Next()
		return nil, nil, err
	}(); err == nil || !strings.Contains(err.Error(), "empty record") {
		t.Fatalf("empty array: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.rawlog")
	data := writeLog(t, 5, true)
	// Add a torn frame: a crash mid-write.
	if err := os.WriteFile(path, append(bytes.Clone(data), 200, 0, 0, 0, 1, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 5 || s.Counts.Completed != 5 || s.Footer == nil || s.TornBytes != 6 || s.CPUSamples != 5 || s.GPUSamples != 1 || s.Header.Worker != 3 {
		t.Fatalf("summary %+v", s)
	}
	var c Counts
	c.Add(Counts{Planned: 2, Completed: 1, Lost: 1})
	c.Add(Counts{Planned: 3, Failed: 1, NotSent: 2})
	if c != (Counts{Planned: 5, Completed: 1, Failed: 1, NotSent: 2, Lost: 1}) || c.Accounted() != 5 {
		t.Fatalf("add: %+v, %d accounted", c, c.Accounted())
	}
}
