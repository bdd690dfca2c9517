package mmapds

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Records point at media entries; a version-1 file (the last record bytes zero) still
// reads, as a plan without media; versions past Version are refused naming both.
func TestMediaEntriesAndVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.plan")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(Record{Phase: PhaseProfile, Media: 1}, []byte(`{"a":1}`))
	w.Add(Record{Phase: PhaseProfile}, []byte(`{"b":1}`))
	entry := MediaEntry{Images: 2, Bytes: 30, Items: []MediaItem{{Kind: "image", Format: "png", Bytes: 10, Width: 4, Height: 3}, {Kind: "image", Format: "jpeg", Bytes: 20}}}
	if _, err := w.Close(&Meta{Paths: []string{"/"}, Media: []MediaEntry{entry}}); err != nil {
		t.Fatal(err)
	}
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r0, _, _ := p.Record(0)
	r1, _, _ := p.Record(1)
	if e := p.Meta().MediaOf(&r0); e == nil || e.Images != 2 || e.Items[0].Width != 4 || e.Items[1].Format != "jpeg" {
		t.Fatalf("entry %+v", e)
	}
	if p.Meta().MediaOf(&r1) != nil {
		t.Fatal("record without media has an entry")
	}
	p.Close()

	data, _ := os.ReadFile(path)
	rehash := func(b []byte) []byte {
		sum := sha256.Sum256(b[:len(b)-HashSize])
		copy(b[len(b)-HashSize:], sum[:])
		return b
	}
	setVersion := func(v uint32) []byte {
		b := append([]byte(nil), data...)
		binary.LittleEndian.PutUint32(b[8:], v)
		return rehash(b)
	}
	if _, err := FromBytes(setVersion(Version+1), Options{}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d is not supported (this build reads versions 1 to %d)", Version+1, Version)) {
		t.Fatalf("future version: %v", err)
	}
	if p1, err := FromBytes(setVersion(1), Options{}); err != nil {
		t.Fatalf("version 1: %v", err)
	} else if err := p1.Validate(); err != nil {
		t.Fatal(err)
	}
	// A media index past the entries is a format error.
	b := append([]byte(nil), data...)
	off := binary.LittleEndian.Uint64(b[48:])
	binary.LittleEndian.PutUint32(b[off+60:], 5)
	p2, err := FromBytes(rehash(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Validate(); err == nil || !strings.Contains(err.Error(), "record 0 has media entry 5, plan has 1") {
		t.Fatalf("bad media index: %v", err)
	}
}
