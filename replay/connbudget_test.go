package replay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/replay/http1"
)

var (
	lo1    = netip.MustParseAddr("127.0.0.1")
	remote = netip.MustParseAddr("10.0.0.5")
)

func dest(a netip.Addr, port uint16, conns int) connDest {
	return connDest{Addr: netip.AddrPortFrom(a, port), Conns: conns}
}

// The default range has 28,232 ports, 14,116 of the parity connect() tries first: the
// issue's 100,000 streams on six loopback servers put 16,667 on each, over the budget of
// one source address, and two loopback addresses carry them; a remote server is refused
// with the numbers and --local-addr, and so is a --local-addr list too short for the load.
func TestPlanSources(t *testing.T) {
	def := portRange{Lo: 32768, Hi: 60999, TWReuse: 2}
	six := func(a netip.Addr, conns int) []connDest {
		var ds []connDest
		for i := range 6 {
			ds = append(ds, dest(a, uint16(18600+i), conns))
		}
		return ds
	}
	for _, tc := range []struct {
		name    string
		dests   []connDest
		srcs    []netip.Addr
		pr      portRange
		tw      map[twKey]int
		spread  string // FormatLocalAddrs of the spread, "" for none
		errHave []string
	}{
		{name: "within budget", dests: six(lo1, 14116), pr: def},
		{name: "issue 38: 100,000 on six loopback servers", dests: six(lo1, 16667), pr: def, spread: "127.0.0.2-127.0.0.3"},
		{name: "one server, 100,000", dests: []connDest{dest(lo1, 8000, 100000)}, pr: def, spread: "127.0.0.2-127.0.0.9"},
		{name: "loopback server on another 127 address", dests: []connDest{dest(netip.MustParseAddr("127.0.0.7"), 8000, 20000)}, pr: def, spread: "127.0.0.2-127.0.0.3"},
		{name: "narrow range", dests: []connDest{dest(lo1, 8000, 300)}, pr: portRange{Lo: 40000, Hi: 40199}, spread: "127.0.0.2-127.0.0.4"},
		{name: "reserved ports shrink it", dests: []connDest{dest(lo1, 8000, 100)}, pr: portRange{Lo: 40000, Hi: 40199, Reserved: 2}, spread: "127.0.0.2-127.0.0.3"},
		{name: "remote server refused", dests: []connDest{dest(remote, 8000, 20000)}, pr: def,
			errHave: []string{"up to 20000 connections on 10.0.0.5:8000", "only 14116", "28232 ephemeral ports (net.ipv4.ip_local_port_range 32768-60999)", "--local-addr with at least 2 source addresses"}},
		{name: "remote server, enough --local-addr", dests: []connDest{dest(remote, 8000, 20000)}, pr: def,
			srcs: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")}},
		{name: "loopback, --local-addr too short is not overridden", dests: six(lo1, 16667), pr: def, srcs: []netip.Addr{netip.MustParseAddr("127.0.0.5")},
			errHave: []string{"the 1 --local-addr addresses open only 14116", "at least 2 source addresses"}},
		{name: "IPv6 loopback has one address", dests: []connDest{dest(netip.IPv6Loopback(), 8000, 20000)}, pr: def,
			errHave: []string{"[::1]:8000", "--local-addr"}},
		{name: "TIME_WAIT counts where it cannot be reused", dests: []connDest{dest(remote, 8000, 14000)}, pr: portRange{Lo: 32768, Hi: 60999, TWReuse: 0},
			tw:      map[twKey]int{{netip.Addr{}, netip.AddrPortFrom(remote, 8000)}: 500},
			errHave: []string{"only 13616", "TIME_WAIT"}},
		{name: "TIME_WAIT reused on loopback", dests: []connDest{dest(lo1, 8000, 14000)}, pr: def,
			tw: map[twKey]int{{netip.Addr{}, netip.AddrPortFrom(lo1, 8000)}: 500}},
		{name: "TIME_WAIT of a loopback source without reuse", dests: []connDest{dest(lo1, 8000, 150)}, pr: portRange{Lo: 40000, Hi: 40199},
			tw: map[twKey]int{{firstAutoSource, netip.AddrPortFrom(lo1, 8000)}: 90}, spread: "127.0.0.2-127.0.0.4"},
		{name: "range unknown", dests: six(lo1, 100000), pr: portRange{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spread, note, err := planSources(tc.dests, tc.srcs, tc.pr, tc.tw)
			if len(tc.errHave) > 0 {
				if err == nil {
					t.Fatalf("spread %v, want an error", spread)
				}
				for _, s := range tc.errHave {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatLocalAddrs(spread); got != tc.spread {
				t.Fatalf("spread %q, want %q (note %q)", got, tc.spread, note)
			}
			if tc.spread != "" && !strings.Contains(note, tc.spread) {
				t.Errorf("note %q does not name %s", note, tc.spread)
			}
		})
	}
}

func TestConnDests(t *testing.T) {
	a := netip.AddrPortFrom(lo1, 1)
	b := netip.AddrPortFrom(lo1, 2)
	got := fmt.Sprint(connDests(100000, []netip.AddrPort{a, b, a}))
	if want := fmt.Sprint([]connDest{{a, 66668}, {b, 33334}}); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := connDests(10, []netip.AddrPort{a, a, a}); got[0].Conns != 10 {
		t.Fatalf("one server behind three URLs: %v, want 10", got)
	}
	if got := connDests(0, []netip.AddrPort{a}); got != nil {
		t.Fatalf("no concurrency bound: %v", got)
	}
}

func TestReservedIn(t *testing.T) {
	for _, tc := range []struct {
		list string
		want int
	}{{"", 0}, {"8000", 0}, {"40000", 1}, {"39990-40009,40100,41000-42000", 10 + 1 + 0}, {"40150-40300", 50}} {
		if got := reservedIn(tc.list, 40000, 40199); got != tc.want {
			t.Errorf("reservedIn(%q) = %d, want %d", tc.list, got, tc.want)
		}
	}
}

func TestProcAddr(t *testing.T) {
	for s, want := range map[string]string{
		"0100007F:48A8":                         "127.0.0.1:18600",
		"0500000A:1F40":                         "10.0.0.5:8000",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:0050": "127.0.0.1:80",
	} {
		got, ok := procAddr(s)
		if !ok || got.String() != want {
			t.Errorf("procAddr(%q) = %v, %v; want %s", s, got, ok, want)
		}
	}
	if _, ok := procAddr("zz:1"); ok {
		t.Error("procAddr accepted bad hex")
	}
}

// TIME_WAIT tuples are counted from the kernel's own table: a connection this test closes
// first leaves one towards its server.
func TestReadTimeWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dst := netip.MustParseAddrPort(ln.Addr().String())
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // the active close: TIME_WAIT is ours
	buf := make([]byte, 1)
	s.Read(buf) // the FIN
	s.Close()
	for range 100 {
		if tw := readTimeWait([]connDest{{Addr: dst}}); tw[twKey{lo1, dst}] == 1 && tw[twKey{netip.Addr{}, dst}] == 1 {
			return
		}
	}
	t.Fatalf("no TIME_WAIT towards %s found in /proc/net/tcp", dst)
}

// Over the budget on loopback, the run spreads itself over loopback source addresses: with
// the range shrunk to 200 ports (100 of one parity), concurrency 300 against one server goes
// out from 127.0.0.2-127.0.0.4 (the server sees those sources), every request completes, on
// both clients, and replay says so in one line and in run.json; a --local-addr list too
// short for the load is refused before anything is sent, naming the numbers.
func TestConnBudgetSpreadsLoopback(t *testing.T) {
	const n = 300
	ps := singleTurn(n, job{N: 2, TTFTms: 300, Stream: true}, nil)
	ps.meta.Concurrency = n
	plan := ps.write(t, t.TempDir())
	for _, client := range []string{ClientLoop, ClientNet} {
		t.Run(client, func(t *testing.T) {
			var mu sync.Mutex
			sources := map[string]int{}
			srv := newTestServer(t, func(s *http.Server) {
				s.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
					h, _, _ := net.SplitHostPort(c.RemoteAddr().String())
					mu.Lock()
					sources[h]++
					mu.Unlock()
					return ctx
				}
			})
			o := testOptions(t, plan, srv.URL)
			o.Client = client
			o.portRange = portRange{Lo: 40000, Hi: 40199, TWReuse: 2}
			var notes strings.Builder
			o.Notice = &notes
			m := runReplay(t, o)
			if m.Counts.Completed != n {
				t.Fatalf("counts %+v", m.Counts)
			}
			note := "connection budget: concurrency puts up to 300 connections on " + strings.TrimPrefix(srv.URL, "http://") +
				" at once, more than the 100 one source address opens to it before connect() slows (half of 200 ephemeral ports (net.ipv4.ip_local_port_range 40000-40199)): spreading them over 3 loopback source addresses, 127.0.0.2-127.0.0.4 (as --local-addr would)"
			if m.Options["local_addrs"] != "127.0.0.2-127.0.0.4" || m.Options["local_addrs_note"] != note || !strings.Contains(notes.String(), "replay: "+note+"\n") {
				t.Fatalf("local_addrs %q, note %q, notices %q", m.Options["local_addrs"], m.Options["local_addrs_note"], notes.String())
			}
			mu.Lock()
			defer mu.Unlock()
			// Round-robin from each worker's offset: a third each, give or take a
			// worker's turn (a loaded machine may end streams early enough to reuse
			// their connections, so the total may be under n).
			total := 0
			for _, c := range sources {
				total += c
			}
			for _, a := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
				if d := sources[a] - total/3; d < -4 || d > 4 {
					t.Errorf("%d of %d connections from %s, want a third (all: %v)", sources[a], total, a, sources)
				}
			}
			if len(sources) != 3 {
				t.Errorf("connections from %v, want 127.0.0.2-127.0.0.4 only", sources)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		srv := newTestServer(t)
		o := testOptions(t, plan, srv.URL)
		o.portRange = portRange{Lo: 40000, Hi: 40199, TWReuse: 2}
		o.LocalAddrs = []netip.Addr{netip.MustParseAddr("127.0.0.5")}
		_, err := New(o)
		if err == nil || !strings.Contains(err.Error(), "up to 300 connections") || !strings.Contains(err.Error(), "--local-addr with at least 3 source addresses") {
			t.Fatalf("New: %v, want the budget's refusal", err)
		}
		if _, serr := os.Stat(o.OutputDir); !os.IsNotExist(serr) || srv.requests.Load() != 0 {
			t.Fatalf("refused run left %v / sent %d requests", serr, srv.requests.Load())
		}
	})
}

// A closed-loop run's first instant starts every stream at once. The event loop dispatches
// for at most maxDispatchBurst before it takes the events that came meanwhile, so the first
// connections are written while later ones are still being opened: before, no request was
// written until the last connect() of the burst had returned, and with connect() slowed by
// a full port range that was tens of seconds, past the server's header timeout.
func TestLoopWritesDuringConnectBurst(t *testing.T) {
	const n = 1500
	ps := singleTurn(n, job{N: 1, TTFTms: 200, Stream: true}, nil)
	ps.meta.Concurrency = n
	plan := ps.write(t, t.TempDir())
	srv := newTestServer(t)
	o := testOptions(t, plan, srv.URL)
	o.Client, o.Workers = ClientLoop, 1
	m := runReplay(t, o)
	recs := readRun(t, m, o.OutputDir)
	if m.Counts.Completed != n {
		t.Fatalf("counts %+v", m.Counts)
	}
	lastConnect, firstWrite := int64(0), int64(1<<62)
	for _, q := range recs {
		lastConnect = max(lastConnect, q.ConnectStartNs)
		firstWrite = min(firstWrite, q.WriteStartNs)
	}
	if firstWrite >= lastConnect {
		t.Fatalf("the first request was written %.1f ms after the last connect began: the loop opened all %d connections before writing any", float64(firstWrite-lastConnect)/1e6, n)
	}
}

// A fresh connection the server closed before the client wrote to it is the client's
// failure when the client had been working without looking at its connections for over a
// second (closedFirst), and the server's otherwise; analyze counts the first as client_error.
func TestClosedFirstText(t *testing.T) {
	var eb http1.Buffers
	late := http1.FailText(http1.NetError, &http1.ClosedFirst{After: int64(12300 * time.Millisecond), Late: int64(11 * time.Second)}, "connect: ", 0, &eb)
	if !strings.HasPrefix(late, ClientErrorPrefix+"connect: the server closed the connection before the request was written, 12.3s after connect() began (the client worked 11s without looking") {
		t.Errorf("late loop: %q", late)
	}
	prompt := http1.FailText(http1.NetError, &http1.ClosedFirst{After: int64(3 * time.Millisecond), Late: int64(2 * time.Millisecond)}, "connect: ", 0, &eb)
	if prompt != "connect: the server closed the connection before the request was written, 3ms after connect() began" {
		t.Errorf("prompt loop: %q", prompt)
	}
}
