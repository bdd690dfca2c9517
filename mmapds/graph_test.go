package mmapds

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeGraphPlan writes two sessions: session 0 is 0 -> {1 (subagent), 2} -> 3 (join of 1
// and 2), record 3 also a live body with 0 and 2's replies; session 1 is one record.
func writeGraphPlan(t testing.TB, path string) [HashSize]byte {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []Node{
		{Agent: 0, Flags: NodeStrict},
		{Agent: 1, Flags: NodeStrict, Parents: []Edge{{0, EdgeSpawn}}},
		{Agent: 0, Flags: NodeStrict, Parents: []Edge{{0, EdgeTurn}}},
		{Agent: 0, Flags: NodeStrict, Parents: []Edge{{2, EdgeTurn}, {1, EdgeJoin}}, Sources: []Edge{{0, EdgeReply}, {2, EdgeReply}}, Reuse: 7},
		{Agent: 2},
	}
	sessions := []uint32{0, 0, 0, 0, 1}
	for i, n := range nodes {
		if err := w.Add(Record{SendOffsetNs: NoSendOffset, DelayNs: -1, Session: sessions[i], Phase: PhaseProfile, ISL: 10}, []byte{'{', '}'}); err != nil {
			t.Fatal(err)
		}
		if err := w.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	h, err := w.Close(&Meta{Paths: []string{"/"}, Agents: []Agent{
		{Session: 0, Parent: -1, Kind: "root", Name: "trace-a"},
		{Session: 0, Parent: 0, Depth: 1, Kind: "subagent", Name: "agent_1", Type: "Explore"},
		{Session: 1, Parent: -1, Kind: "root", Name: "trace-b"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A graph plan is version 3 and reads back node by node, edge by edge; plans without a
// graph keep their version (1, or 2 with media) and bytes.
func TestGraphRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.plan")
	writeGraphPlan(t, path)
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if v := binary.LittleEndian.Uint32(data[8:]); v != GraphVersion || !p.HasGraph() {
		t.Fatalf("version %d, graph %v", v, p.HasGraph())
	}
	n := p.GraphNode(3)
	parents, sources := p.Edges(nil, n)
	if n.Agent != 0 || n.Flags != NodeStrict || n.Reuse != 7 || len(parents) != 2 || parents[1] != (Edge{1, EdgeJoin}) || len(sources) != 2 || sources[1] != (Edge{2, EdgeReply}) {
		t.Fatalf("node 3: %+v %v %v", n, parents, sources)
	}
	if a := p.Meta().Agents[1]; a.Name != "agent_1" || a.Parent != 0 || a.Depth != 1 || a.Type != "Explore" {
		t.Fatalf("agent 1: %+v", a)
	}
	if n := p.GraphNode(4); n.Agent != 2 || n.Parents != 0 || n.EdgeFirst != 6 || n.Reuse != 0 {
		t.Fatalf("node 4: %+v", n)
	}
	// Deterministic.
	if h := writeGraphPlan(t, filepath.Join(dir, "g2.plan")); h != p.Hash() {
		t.Fatal("same graph, different hash")
	}
	// Without a graph the version stays 1.
	writeTestPlan(t, filepath.Join(dir, "plain.plan"), 3)
	plain, _ := os.ReadFile(filepath.Join(dir, "plain.plan"))
	if v := binary.LittleEndian.Uint32(plain[8:]); v != MinVersion {
		t.Fatalf("plain plan version %d", v)
	}
	q, err := FromBytes(plain, Options{})
	if err != nil || q.HasGraph() {
		t.Fatalf("plain plan: %v, graph %v", err, q != nil && q.HasGraph())
	}
}

// A corrupt graph is a format error naming the record, never a panic.
func TestGraphValidation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.plan")
	writeGraphPlan(t, path)
	data, _ := os.ReadFile(path)
	le := binary.LittleEndian
	recs := le.Uint64(data[48:])
	goff := le.Uint64(data[80:])
	edges := goff + 5*NodeSize
	rehash := func(b []byte) []byte {
		sum := sha256.Sum256(b[:len(b)-HashSize])
		copy(b[len(b)-HashSize:], sum[:])
		return b
	}
	for _, tc := range []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"forward edge", func(b []byte) { le.PutUint32(b[edges+0*EdgeSize:], 3) }, "record 1 depends on record 3, which is not earlier"},
		{"other session", func(b []byte) { le.PutUint32(b[recs+4*RecordSize+40:], 0) }, "of session 0 has agent 2 of session 1"},
		{"parent kind", func(b []byte) { b[edges+0*EdgeSize+4] = uint8(EdgeReply) }, "parent edge of kind 5"},
		{"source kind", func(b []byte) { b[edges+4*EdgeSize+4] = uint8(EdgeJoin) }, "reply source edge of kind 4"},
		{"edge order", func(b []byte) { le.PutUint32(b[goff+2*NodeSize+4:], 0) }, "record 2 has its edges at 0, want 1"},
		{"agent range", func(b []byte) { le.PutUint32(b[goff+4*NodeSize:], 9) }, "record 4 has agent 9, plan has 3"},
		{"flags", func(b []byte) { b[goff+NodeSize+12] = 0x80 }, "unknown node flags"},
		{"reserved", func(b []byte) { b[goff+NodeSize+14] = 1 }, "reserved node bytes"},
		{"reuse", func(b []byte) { le.PutUint32(b[goff+3*NodeSize+16:], 11) }, "record 3 expects 11 reused prompt tokens of 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), data...)
			tc.edit(b)
			p, err := FromBytes(rehash(b), Options{})
			if err == nil {
				err = p.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
	// Sessions are consecutive.
	rp := filepath.Join(filepath.Dir(path), "r.plan")
	w, _ := Create(rp)
	for _, s := range []uint32{0, 1, 0} {
		w.Add(Record{Session: s, Phase: PhaseProfile}, []byte("{}"))
		w.AddNode(Node{Agent: s})
	}
	w.Close(&Meta{Paths: []string{"/"}, Agents: []Agent{{Session: 0, Parent: -1}, {Session: 1, Parent: -1}}})
	if p, err := Open(rp, Options{}); err != nil {
		t.Fatal(err)
	} else if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "record 2 resumes session 0 after session 1") {
		t.Fatalf("resumed session: %v", err)
	}
	// Header: a version 2 file with graph bytes, a graph section not after the records.
	b := append([]byte(nil), data...)
	le.PutUint32(b[8:], 2)
	if _, err := FromBytes(rehash(b), Options{}); err == nil || !strings.Contains(err.Error(), "version 2 header has graph section bytes set") {
		t.Fatalf("v2 with a graph: %v", err)
	}
	b = append([]byte(nil), data...)
	le.PutUint64(b[80:], goff+8)
	if _, err := FromBytes(rehash(b), Options{}); err == nil || !strings.Contains(err.Error(), "does not follow the records") {
		t.Fatalf("misplaced graph: %v", err)
	}
}

// The writer refuses a graph that is not one node per record, and forward edges.
func TestGraphWriterChecks(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(filepath.Join(dir, "a"))
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	if err := w.AddNode(Node{}); err == nil {
		t.Fatal("a graph starting at the second record was accepted")
	}
	w.Abort()
	w, _ = Create(filepath.Join(dir, "b"))
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	w.AddNode(Node{})
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	if _, err := w.Close(&Meta{Paths: []string{"/"}}); err == nil {
		t.Fatal("a record without a node was accepted")
	}
	w, _ = Create(filepath.Join(dir, "c"))
	w.Add(Record{Phase: PhaseProfile}, []byte("{}"))
	if err := w.AddNode(Node{Parents: []Edge{{0, EdgeTurn}}}); err == nil {
		t.Fatal("a self edge was accepted")
	}
	w.Abort()
	if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Fatal("a refused plan was left behind")
	}
}

func FuzzGraphFromBytes(f *testing.F) {
	path := filepath.Join(f.TempDir(), "g.plan")
	writeGraphPlan(f, path)
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := FromBytes(data, Options{SkipHash: true})
		if err != nil {
			return
		}
		if p.Validate() != nil || !p.HasGraph() {
			return
		}
		for i := 0; i < p.Len(); i++ {
			p.Edges(nil, p.GraphNode(i))
		}
	})
}
