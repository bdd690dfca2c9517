package rawlog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testHash = "1488b994d47ccf9e7017e9f0146db0f6f442745ad7ad109ffe3eac703fe3c6b5"

func validManifest() *Manifest {
	return &Manifest{FormatVersion: ManifestVersion, Tool: "llmbench replay", PlanHash: testHash, PlanPath: "/p.plan",
		URLs: []string{"http://h"}, StartUnixNs: 1, Status: StatusComplete,
		Workers: []WorkerInfo{
			{ID: 0, Log: "worker-000.rawlog", Planned: 3, Status: StatusComplete},
			{ID: 1, Log: "worker-001.rawlog", Planned: 3, Status: StatusKilled, Lost: 1, RecoveryLog: "worker-001.recovered.rawlog", Recovered: 2},
		},
		Counts: Counts{Planned: 6, Completed: 3, NotSent: 2, Lost: 1}}
}

func TestParseManifest(t *testing.T) {
	good, err := json.Marshal(validManifest())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseManifest(good, "run.json"); err != nil {
		t.Fatalf("valid manifest: %v", err)
	}
	for _, c := range []struct {
		name    string
		edit    func(m *Manifest)
		raw     string // instead of edit
		want    string
		damaged bool
	}{
		{name: "truncated", raw: string(good[:len(good)/2]), want: "unexpected end of JSON input", damaged: true},
		{name: "empty", raw: " ", want: "unexpected end of JSON input", damaged: true},
		{name: "garbled", raw: `{"format_version":1,"plan_hash":"` + testHash + `",#"workers":[]}`, want: "invalid character '#'", damaged: true},
		{name: "no version", raw: `{"plan_hash":"` + testHash + `"}`, want: "no format_version"},
		{name: "future version", raw: `{"format_version":2}`, want: "run.json format version 2 is not supported"},
		{name: "no plan hash", edit: func(m *Manifest) { m.PlanHash = "" }, want: "no plan_hash"},
		{name: "short plan hash", edit: func(m *Manifest) { m.PlanHash = testHash[:12] }, want: "not a hex SHA-256"},
		{name: "upper-case plan hash", edit: func(m *Manifest) { m.PlanHash = strings.ToUpper(testHash) }, want: "not a hex SHA-256"},
		{name: "duplicate worker", edit: func(m *Manifest) { m.Workers[1].ID = 0 }, want: "given twice"},
		{name: "no log", edit: func(m *Manifest) { m.Workers[0].Log = "" }, want: "no file name"},
		{name: "log path", edit: func(m *Manifest) { m.Workers[0].Log = "../x.rawlog" }, want: "not a file name"},
		{name: "telemetry path", edit: func(m *Manifest) { m.TelemetryLog = "/etc/passwd" }, want: "not a file name"},
		{name: "shared log", edit: func(m *Manifest) { m.Workers[1].Log = m.Workers[0].Log }, want: "named twice"},
		{name: "negative planned", edit: func(m *Manifest) { m.Workers[0].Planned = -1 }, want: "lost <= planned"},
		{name: "lost over planned", edit: func(m *Manifest) { m.Workers[1].Lost = 4 }, want: "lost <= planned"},
		{name: "recovered without log", edit: func(m *Manifest) { m.Workers[1].RecoveryLog = "" }, want: "does not fit"},
		{name: "recovered over planned", edit: func(m *Manifest) { m.Workers[1].Recovered = 4 }, want: "does not fit"},
		{name: "negative count", edit: func(m *Manifest) { m.Counts.Failed = -1 }, want: "negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := []byte(c.raw)
			if c.edit != nil {
				m := validManifest()
				c.edit(m)
				b, _ = json.Marshal(m)
			}
			_, err := ParseManifest(b, "dir/run.json")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "dir/run.json") {
				t.Fatalf("error %v; want one naming dir/run.json and %q", err, c.want)
			}
			if errors.Is(err, ErrManifest) != c.damaged {
				t.Fatalf("errors.Is(%v, ErrManifest) = %v", err, !c.damaged)
			}
		})
	}
}

func TestHashPrefixes(t *testing.T) {
	other := testHash[:30] + "0" + testHash[31:]
	for _, c := range []struct{ a, b, wantA, wantB string }{
		{testHash, strings.Repeat("a", 64), testHash[:12], strings.Repeat("a", 12)},
		{testHash, other, testHash[:31], other[:31]},
		{testHash, "", testHash[:12], ""},
		{"abc", "abcd", "abc", "abcd"},
	} {
		a, b := HashPrefixes(c.a, c.b)
		if a != c.wantA || b != c.wantB {
			t.Errorf("HashPrefixes(%q, %q) = %q, %q; want %q, %q", c.a, c.b, a, b, c.wantA, c.wantB)
		}
		if c.a != c.b && a == b {
			t.Errorf("HashPrefixes(%q, %q): equal prefixes %q", c.a, c.b, a)
		}
	}
}

// The header fields added for RebuildManifest round-trip, and a header written before them
// (6 elements) reads with PlanPath "" and Planned, Workers -1.
func TestHeaderFields(t *testing.T) {
	h := Header{Worker: 2, PID: 7, CPU: 3, PlanHash: testHash, StartUnixNs: 5, PlanPath: "/a b.plan", Planned: 41, Workers: 4}
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, h); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), "new")
	if err != nil || r.Header() != h {
		t.Fatalf("header %+v %v; want %+v", r.Header(), err, h)
	}
	var old []byte
	old = append(old, Magic...)
	old = binary.LittleEndian.AppendUint32(old, 1)
	old = append(old, 0, 0, 0, 0)
	p := appendArrayHeader(nil, 6)
	for _, v := range []int64{int64(KindHeader), 2, 7, 3} {
		p = appendInt(p, v)
	}
	p = appendStr(p, testHash)
	p = appendInt(p, 5)
	old = binary.LittleEndian.AppendUint32(old, uint32(len(p)))
	old = binary.LittleEndian.AppendUint32(old, crc32.Checksum(p, castagnoli))
	old = append(old, p...)
	r, err = NewReader(bytes.NewReader(old), "old")
	want := Header{Worker: 2, PID: 7, CPU: 3, PlanHash: testHash, StartUnixNs: 5, Planned: -1, Workers: -1}
	if err != nil || r.Header() != want {
		t.Fatalf("old header %+v %v; want %+v", r.Header(), err, want)
	}
}

func writeTestLog(t *testing.T, path string, h Header, requests int, status string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < requests; i++ {
		if err := w.WriteRequest(sampleRequest(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{Requests: requests, Status: status}); err != nil {
		t.Fatal(err)
	}
}

func TestRebuildManifest(t *testing.T) {
	dir := t.TempDir()
	hdr := func(worker, planned int) Header {
		return Header{Worker: worker, PID: 100 + worker, CPU: worker, PlanHash: testHash, StartUnixNs: 99, PlanPath: "/x/p.plan", Planned: planned, Workers: 3}
	}
	writeTestLog(t, filepath.Join(dir, "worker-000.rawlog"), hdr(0, 4), 4, StatusComplete)
	writeTestLog(t, filepath.Join(dir, "worker-001.rawlog"), hdr(1, 5), 2, StatusComplete)
	writeTestLog(t, filepath.Join(dir, "worker-001.recovered.rawlog"), Header{Worker: 1, CPU: -1, PlanHash: testHash, StartUnixNs: 99}, 3, StatusRecovered)
	// Worker 2's header is damaged: it is listed, so that its reader reports the damage.
	os.WriteFile(filepath.Join(dir, "worker-002.rawlog"), []byte("LLMRAW\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00garbage"), 0o644)
	writeTestLog(t, filepath.Join(dir, "telemetry.rawlog"), Header{Worker: -1, PlanHash: testHash, StartUnixNs: 99}, 0, StatusComplete)
	os.WriteFile(filepath.Join(dir, "worker-x.rawlog"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	m, err := RebuildManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{FormatVersion: ManifestVersion, Tool: "llmbench replay", PlanHash: testHash, PlanPath: "/x/p.plan",
		StartUnixNs: 99, TelemetryLog: "telemetry.rawlog", Status: StatusUnknown,
		Workers: []WorkerInfo{
			{ID: 0, PID: 100, CPU: 0, Log: "worker-000.rawlog", Planned: 4, Status: StatusUnknown},
			{ID: 1, PID: 101, CPU: 1, Log: "worker-001.rawlog", Planned: 5, Status: StatusUnknown, RecoveryLog: "worker-001.recovered.rawlog", Recovered: 3},
			{ID: 2, CPU: -1, Log: "worker-002.rawlog", Status: StatusUnknown},
		},
		Counts: Counts{Planned: 9}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("rebuilt\n%+v\nwant\n%+v", m, want)
	}

	// Logs of two runs, or none readable, give no manifest.
	writeTestLog(t, filepath.Join(dir, "worker-003.rawlog"), Header{Worker: 3, PlanHash: testHash, StartUnixNs: 100}, 0, StatusComplete)
	if _, err := RebuildManifest(dir); err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Fatalf("two runs: %v", err)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "worker-000.rawlog"), []byte("junk"), 0o644)
	if _, err := RebuildManifest(empty); err == nil || !strings.Contains(err.Error(), "no worker log header is readable") {
		t.Fatalf("no header: %v", err)
	}
}

// FuzzParseManifest: any bytes give a manifest or an error, never a panic; an accepted
// manifest is valid and survives writing and reading again unchanged.
func FuzzParseManifest(f *testing.F) {
	good, _ := json.MarshalIndent(validManifest(), "", "  ")
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"format_version":1,"plan_hash":"` + testHash + `","workers":[{"id":0,"log":"w","planned":1e12}]}`))
	f.Add([]byte(`{"format_version":1,"plan_hash":"` + testHash + `","options":{"headers":["X-A: b"],"n":1.5,"x":null}}`))
	f.Add([]byte(`{"format_version":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b, "run.json")
		if err != nil {
			if m != nil {
				t.Fatal("manifest with an error")
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid manifest: %v", err)
		}
		dir := t.TempDir()
		if err := WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadManifest(dir)
		if err != nil {
			t.Fatalf("rewritten manifest rejected: %v", err)
		}
		// Equal as written: an empty map or list and an absent one (omitempty) are the same
		// run.json, so the comparison is of the encodings, which lose nothing else.
		b1, err1 := json.Marshal(m)
		b2, err2 := json.Marshal(m2)
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the manifest:\n%s\n%s", b1, b2)
		}
	})
}
