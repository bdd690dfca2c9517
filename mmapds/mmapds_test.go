package mmapds

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func writeTestPlan(t testing.TB, path string, n int) [HashSize]byte {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := Record{SendOffsetNs: int64(i) * 1000, DelayNs: -1, Session: uint32(i), ISL: uint32(10 + i), OSL: 5, Phase: PhaseProfile}
		if err := w.Add(r, []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.Close(&Meta{Endpoint: "chat", Paths: []string{"/v1/chat/completions"}, Method: "POST",
		Spec: map[string]any{"b": 1, "a": "x", "c": []int{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.plan")
	h := writeTestPlan(t, path, 100)
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Hash() != h || p.Len() != 100 {
		t.Fatalf("hash/len mismatch: %x %d", p.Hash(), p.Len())
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		r, body, err := p.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"i":%d}`, i); string(body) != want || r.Index != uint32(i) || r.ISL != uint32(10+i) || r.SendOffsetNs != int64(i)*1000 || r.DelayNs != -1 {
			t.Fatalf("record %d: %+v %q", i, r, body)
		}
	}
	if p.Meta().Endpoint != "chat" || p.Meta().Paths[0] != "/v1/chat/completions" {
		t.Fatalf("meta: %+v", p.Meta())
	}
	if _, _, err := p.Record(100); err == nil {
		t.Fatal("out of range record accepted")
	}
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	a := writeTestPlan(t, filepath.Join(dir, "a"), 50)
	b := writeTestPlan(t, filepath.Join(dir, "b"), 50)
	if a != b {
		t.Fatal("same content gave different hashes")
	}
}

func TestRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(t, path, 10)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than a header"},
		{"truncated", good[:len(good)-10], "truncated"},
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version", mutate(func(b []byte) []byte { b[8] = 9; return b }), "version 9 is not supported"},
		{"corrupt body", mutate(func(b []byte) []byte { b[HeaderSize+1] ^= 1; return b }), "hash mismatch"},
		{"record count", mutate(func(b []byte) []byte { b[24] = 200; return b }), "record count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromBytes(c.data, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want error containing %q", err, c.want)
			}
		})
	}
	if _, err := FromBytes(good[:len(good)-10], Options{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("truncated file error does not wrap ErrFormat: %v", err)
	}
}

func TestSkipHashStillChecksBodies(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(t, path, 3)
	data, _ := os.ReadFile(path)
	p, err := FromBytes(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Point record 0's body past the bodies section.
	off := p.h.recordsOff + 24
	data[off+4] = 0xff
	p2, err := FromBytes(data, Options{SkipHash: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p2.Record(0); err == nil {
		t.Fatal("record with body outside the section accepted")
	}
	if err := p2.Validate(); err == nil {
		t.Fatal("Validate accepted a bad record")
	}
}

func TestRecordAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(t, path, 10)
	p, err := Open(path, Options{SkipHash: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := p.Record(3); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Record allocates %v per call", allocs)
	}
}

func FuzzFromBytes(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(f, path, 4)
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add(good[:HeaderSize+HashSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := FromBytes(data, Options{SkipHash: true})
		if err != nil {
			return
		}
		for i := 0; i < p.Len() && i < 64; i++ {
			p.Record(i)
		}
		p.Validate()
	})
}

func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(b, path, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := Open(path, Options{SkipHash: true})
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

func TestMetaEncodingIsCanonical(t *testing.T) {
	// Typed maps iterate in random order; the encoding must not.
	stats := map[string]float64{}
	nested := map[string]map[string]int{}
	for i := 0; i < 50; i++ {
		stats[fmt.Sprintf("k%02d", i)] = float64(i) / 3
		nested[fmt.Sprintf("n%02d", i)] = map[string]int{"a": i, "b": -i, "c": 2 * i}
	}
	m := &Meta{Endpoint: "chat", Paths: []string{"/"},
		Spec:         map[string]any{"x": []int{3, 1}, "y": stats},
		InputInsight: map[string]any{"stats": stats, "nested": nested, "list": []map[string]int{{"p": 1, "q": 2, "r": 3}}}}
	first, err := encodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		b, err := encodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, first) {
			t.Fatal("meta encoding depends on map iteration order")
		}
	}
	back, err := decodeMeta(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.InputInsight["stats"].(map[string]any)["k03"]; got != float64(1) {
		t.Fatalf("round trip: %v", got)
	}
	if _, ok := m.Spec["y"].(map[string]float64); !ok {
		t.Fatal("encodeMeta modified the caller's meta")
	}
}

func TestWriterReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.plan")
	writeTestPlan(t, path, 3)
	old, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	// A failed write leaves the existing plan alone and no temporary file behind.
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	w.Abort()
	if _, err := w.Close(&Meta{}); err == nil {
		t.Fatal("Close after Abort succeeded")
	}
	// A new plan replaces the old file while the old mapping stays readable.
	writeTestPlan(t, path, 5)
	if _, body, err := old.Record(2); err != nil || string(body) != `{"i":2}` {
		t.Fatalf("old mapping: %q %v", body, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "p.plan" {
		t.Fatalf("directory holds %v", entries)
	}
	p, err := Open(path, Options{})
	if err != nil || p.Len() != 5 {
		t.Fatalf("new plan: %v", err)
	}
	p.Close()
	if _, err := Create(filepath.Join(dir, "missing", "p.plan")); err == nil || !strings.Contains(err.Error(), "missing/p.plan") {
		t.Fatalf("create in a missing folder: %v", err)
	}
}

func TestSharedBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.plan")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := w.AddBody([]byte(`{"a":1}`))
	b, _ := w.AddBody([]byte(`{"b":2}`))
	for i := 0; i < 6; i++ {
		ref := a
		if i%3 == 2 {
			ref = b
		}
		if err := w.AddRef(Record{Phase: PhaseProfile, Session: uint32(i)}, ref); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddRef(Record{}, BodyRef{Offset: 100, Len: 1}); err == nil {
		t.Fatal("a reference outside the written bodies was accepted")
	}
	w.Abort()
	w2, _ := Create(path)
	w2.Grow(10)
	ra, _ := w2.AddBody([]byte(`{"a":1}`))
	rb, _ := w2.AddBody([]byte(`{"b":2}`))
	for i := 0; i < 6; i++ {
		ref := ra
		if i%3 == 2 {
			ref = rb
		}
		w2.AddRef(Record{Phase: PhaseProfile, Session: uint32(i)}, ref)
	}
	if _, err := w2.Close(&Meta{Paths: []string{"/"}}); err != nil {
		t.Fatal(err)
	}
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		_, body, _ := p.Record(i)
		want := `{"a":1}`
		if i%3 == 2 {
			want = `{"b":2}`
		}
		if string(body) != want {
			t.Fatalf("record %d body %q", i, body)
		}
	}
}

// rewriteRecord changes record i of the plan file at path with edit and stores a fresh
// hash, as a buggy or hostile plan writer would: only Validate can catch it.
func rewriteRecord(t *testing.T, path string, i int, edit func(b []byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := binary.LittleEndian.Uint64(data[48:]) + uint64(i)*RecordSize
	edit(data[off : off+RecordSize])
	sum := sha256.Sum256(data[:len(data)-HashSize])
	copy(data[len(data)-HashSize:], sum[:])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Validate refuses every record replay or analyze would mis-index or misread, naming the
// file and the record.
func TestValidateRecords(t *testing.T) {
	le := binary.LittleEndian
	for _, c := range []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"index out of range", func(b []byte) { le.PutUint32(b[36:], 64) }, "record 1 has index 64"},
		{"duplicated index", func(b []byte) { le.PutUint32(b[36:], 0) }, "record 1 has index 0"},
		{"unknown phase", func(b []byte) { b[58] = 7 }, "record 1 has unknown phase 7"},
		{"negative send offset", func(b []byte) { le.PutUint64(b[0:], uint64(1<<64-5)) }, "record 1 has negative send offset -5"},
		{"negative cancel-after", func(b []byte) { le.PutUint64(b[16:], uint64(1<<64-1)) }, "record 1 has negative cancel-after -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.plan")
			writeTestPlan(t, path, 3)
			rewriteRecord(t, path, 1, c.edit)
			p, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			err = p.Validate()
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate: %v, want %q naming %s", err, c.want, path)
			}
		})
	}
}

// A plan truncated while mapped faults on its next read; with SetPanicOnFault that is a
// panic FaultError turns into ErrChanged. Other panics are not faults on the mapping.
func TestFaultError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.plan")
	writeTestPlan(t, path, 200)
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	read := func(fn func()) (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			v := recover()
			if err = p.FaultError(v); err == nil && v != nil {
				err = fmt.Errorf("not a fault: %v", v)
			}
		}()
		fn()
		return nil
	}
	err = read(func() { p.Record(p.Len() - 1) })
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("read of a truncated mapping: %v", err)
	}
	if err := read(func() { panic("boom") }); err == nil || errors.Is(err, ErrChanged) {
		t.Fatalf("plain panic: %v", err)
	}
	var nilPlan *Plan
	if err := read(func() { _ = nilPlan.Len() }); err == nil || errors.Is(err, ErrChanged) {
		t.Fatalf("nil dereference: %v", err)
	}
}
