package replay

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/schedule"
)

// https URLs work through crypto/tls, with a CA file.
func TestTLS(t *testing.T) {
	ts := &testServer{}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(ts.handle))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes below are expected
	ts.StartTLS()
	defer ts.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := singleTurn(3, job{N: 20, Stream: true}, func(i int) int64 { return int64(i) * 1e6 }).write(t, dir)
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{ts.URL}, TLSCAFile: ca}, nil)
	if res.Counts.Completed != 3 || countSSEData(reqs[2].Body) != 20 {
		t.Fatalf("counts %+v err %q", res.Counts, reqs[0].Err)
	}
	// Without the CA the handshake fails, and that is a logged outcome.
	res, reqs, _ = runInProcess(t, workerConfig{Plan: plan, URLs: []string{ts.URL}}, nil)
	if res.Counts.Failed != 3 || !strings.Contains(reqs[0].Err, "certificate") {
		t.Fatalf("untrusted: counts %+v err %q", res.Counts, reqs[0].Err)
	}
}

// A pooled connection the server closed while idle is replaced without failing the request.
func TestStaleConnectionRetried(t *testing.T) {
	srv := newTestServer(t, func(s *http.Server) { s.IdleTimeout = 30 * time.Millisecond })
	plan := singleTurn(4, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 100e6 }).write(t, t.TempDir())
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{srv.URL}}, nil)
	if res.Counts.Completed != 4 {
		t.Fatalf("counts %+v: %q %q", res.Counts, reqs[1].Err, reqs[2].Err)
	}
	if srv.conns.Load() != 4 {
		t.Fatalf("%d connections", srv.conns.Load())
	}
}

func TestRedactArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"replay --api-key sk-1 --plan p", "replay --api-key REDACTED --plan p"},
		{"replay --api-key=sk-1", "replay --api-key=REDACTED"},
		{"replay -H Authorization:Bearer-x -H X-A:b", "replay -H Authorization: REDACTED -H X-A:b"},
		{"replay --header=x-api-key:k", "replay --header=x-api-key: REDACTED"},
		{"replay -Hcookie:a=b", "replay -Hcookie: REDACTED"},
		{"replay --url http://u:pw@h:1/", "replay --url http://REDACTED@h:1/"},
		{"replay --plan p", "replay --plan p"},
	} {
		got := strings.Join(RedactArgs(strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		err  bool
	}{
		{"0", "[0]", false},
		{"0-3,6", "[0 1 2 3 6]", false},
		{" 1 , 2 ", "[1 2]", false},
		{"3-1", "", true},
		{"1,1", "", true},
		{"a", "", true},
		{"1,", "", true},
		{"", "", true},
	} {
		got, err := ParseCPUList(c.in)
		if (err != nil) != c.err || (!c.err && fmt.Sprint(got) != c.want) {
			t.Errorf("%q: got %v %v", c.in, got, err)
		}
	}
}

// Sessions are numbered in order of first appearance and dealt to workers and URLs whole;
// a worker's part chains each session's turns into one unit.
func TestWorkerPartAssignment(t *testing.T) {
	ps := &planSpec{}
	// Sessions 9, 5, 9, 7, 5, 9 (turns), then singles.
	sessions := []uint32{9, 5, 9, 7, 5, 9, 1, 2, 3}
	turns := map[uint32]uint32{}
	for i, s := range sessions {
		delay := int64(-1)
		if turns[s] > 0 {
			delay = 0
		}
		ps.add(mmapds.Record{SendOffsetNs: int64(i), DelayNs: delay, Session: s, Turn: turns[s], Phase: mmapds.PhaseProfile}, []byte("{}"))
		turns[s]++
	}
	p, err := mmapds.Open(ps.write(t, t.TempDir()), mmapds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ord, n, err := sessionOrdinals(p)
	if err != nil || n != 6 || fmt.Sprint(ord) != "[0 1 0 2 1 0 3 4 5]" {
		t.Fatalf("ordinals %v %d %v", ord, n, err)
	}
	if s := recordsPerWorker(ord, 2); fmt.Sprint(s) != "[5 4]" {
		t.Fatalf("sizes %v", s)
	}
	g, err := schedule.LoadChains(p, ord, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var records []int32
	for i := int32(0); i < int32(g.Len()); i++ {
		records = append(records, g.Node(i).Index)
	}
	// Ordinals 0 (session 9: records 0, 2, 5), 2 (session 7: 3) and 4 (session 2: 7).
	if fmt.Sprint(records) != "[0 2 3 5 7]" || g.Units() != 3 {
		t.Fatalf("records %v, %d units", records, g.Units())
	}
	// Session 9 is one unit of three records: 0 -> 2 -> 5.
	if g.Parents(1)[0] != 0 || g.Parents(3)[0] != 1 || len(g.Children(3)) != 0 || g.Node(3).Unit() != 0 {
		t.Fatalf("chain: parents %v %v, children of the last %v", g.Parents(1), g.Parents(3), g.Children(3))
	}
	for u := int32(0); u < int32(g.Units()); u++ {
		if k := g.Unit(u).Session; schedule.WorkerOf(k, 2) != 0 || driver.URLOf(k, 3) != int(k)%3 {
			t.Fatalf("unit %d (ordinal %d) on the wrong worker or URL", u, k)
		}
	}
}
