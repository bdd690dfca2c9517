package replay

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/replay/http1"
)

// The connection budget: how many connections this host opens, cheaply, to each server
// address at once, decided before anything is sent (docs/distributed.md, "Connection budget").
//
// A connection is one (source address, source port, server address, server port) tuple. When
// the socket is not bound to a port, connect() searches the ephemeral range
// (net.ipv4.ip_local_port_range) for a port whose tuple is free, and it tries the ports of one
// parity first (inet_csk_get_port takes the other for bind()). Past those, half the range, it
// scans every one of them again for each new connection before it tries the other half:
// measured on Linux 6.18, connect() to one server port went from ~0.1 ms to 7-13 ms past
// 14,116 connections (the default 32768-60999 range). An event loop that issues its
// connects in one burst then comes back to its first connections tens of seconds late; a
// server that bounds the wait for a request's headers (Go's ReadHeaderTimeout, 10 s in
// mockllm) closes them first, and the request is written into a closed connection. So the
// budget of one source address for one server address is half the range, less the tuples
// held in TIME_WAIT that connect() may not reuse (net.ipv4.tcp_tw_reuse: 1 always, 2 on
// loopback only). Spreading over more source addresses multiplies it: on loopback, where
// all of 127.0.0.0/8 is local, replay does so by itself (--local-addr's picker);
// elsewhere it refuses a run over the budget, naming --local-addr and the numbers.

// portRange is the kernel's ephemeral-port settings that bound the connections of one
// source address to one server address.
type portRange struct {
	Lo, Hi int // net.ipv4.ip_local_port_range
	// Reserved is how many ports of the range net.ipv4.ip_local_reserved_ports holds back.
	Reserved int
	// TWReuse is net.ipv4.tcp_tw_reuse: 0 never, 1 always, 2 for loopback only.
	TWReuse int
}

// ports is the number of ephemeral ports connect() may use.
func (p portRange) ports() int { return max(p.Hi-p.Lo+1-p.Reserved, 0) }

// cheap is how many connections one source address opens to one server address before
// connect() slows: the ports of the parity it tries first.
func (p portRange) cheap() int { return p.ports() / 2 }

// reusesTimeWait reports whether connect() may reuse a tuple in TIME_WAIT towards dst.
func (p portRange) reusesTimeWait(dst netip.Addr) bool {
	return p.TWReuse == 1 || p.TWReuse == 2 && dst.IsLoopback()
}

func (p portRange) String() string {
	s := fmt.Sprintf("%d ephemeral ports (net.ipv4.ip_local_port_range %d-%d", p.ports(), p.Lo, p.Hi)
	if p.Reserved > 0 {
		s += fmt.Sprintf(", %d of them reserved", p.Reserved)
	}
	return s + ")"
}

// twKey is one (source address, server address and port) pair of TIME_WAIT tuples.
type twKey struct {
	src netip.Addr
	dst netip.AddrPort
}

// connDest is one server address and the most connections the run holds open to it at once.
type connDest struct {
	Addr  netip.AddrPort
	Conns int
}

// maxAutoSources bounds the loopback source addresses replay spreads over by itself: 1,024
// of them carry 14 million connections to one server port.
const maxAutoSources = 1024

// firstAutoSource is the first loopback address replay spreads over: 127.0.0.1 is the
// kernel's own choice, left to connections made without a source address.
var firstAutoSource = netip.AddrFrom4([4]byte{127, 0, 0, 2})

// planSources decides the source addresses of a run whose connections go to dests: srcs
// (the --local-addr list; nil lets the kernel choose) when they hold every destination's
// connections within budget, else, when srcs is nil and every destination is an IPv4
// loopback address, enough loopback addresses from 127.0.0.2 on (spread, with a note that
// says why); anything else is refused with the numbers and what to do. tw counts the tuples
// in TIME_WAIT (nil: none known).
func planSources(dests []connDest, srcs []netip.Addr, pr portRange, tw map[twKey]int) (spread []netip.Addr, note string, err error) {
	cheap := pr.cheap()
	if cheap <= 0 {
		return nil, "", nil // nothing known of the range
	}
	// room is what source src (invalid: the kernel's choice) opens to d before connect() slows.
	room := func(src netip.Addr, d connDest) int {
		held := 0
		if !pr.reusesTimeWait(d.Addr.Addr()) {
			held = tw[twKey{src, d.Addr}]
		}
		return max(cheap-held, 0)
	}
	worst, short := connDest{}, 0 // the destination furthest over its budget
	for _, d := range dests {
		have := 0
		if len(srcs) == 0 {
			have = room(netip.Addr{}, d)
		}
		for _, s := range srcs {
			have += room(s, d)
		}
		if d.Conns > have && d.Conns-have > short {
			worst, short = d, d.Conns-have
		}
	}
	if short == 0 {
		return nil, "", nil
	}
	loopback := len(srcs) == 0
	for _, d := range dests {
		loopback = loopback && d.Addr.Addr().Is4() && d.Addr.Addr().IsLoopback()
	}
	if loopback {
		// Add loopback sources until every destination fits.
		have := make([]int, len(dests))
		for a := firstAutoSource; len(spread) < maxAutoSources; a = a.Next() {
			spread = append(spread, a)
			fits := true
			for i, d := range dests {
				have[i] += room(a, d)
				fits = fits && have[i] >= d.Conns
			}
			if fits {
				return spread, fmt.Sprintf("connection budget: concurrency puts up to %d connections on %s at once, more than the %d one source address opens to it before connect() slows (half of %s): spreading them over %d loopback source addresses, %s (as --local-addr would)",
					worst.Conns, worst.Addr, cheap, pr, len(spread), FormatLocalAddrs(spread)), nil
			}
		}
	}
	what := "the one source address the kernel chooses opens"
	if len(srcs) > 0 {
		what = fmt.Sprintf("the %d --local-addr addresses open", len(srcs))
	}
	need := (worst.Conns + cheap - 1) / cheap
	how := fmt.Sprintf("give --local-addr with at least %d source addresses this host owns (on loopback, e.g. %s)", need,
		FormatLocalAddrs([]netip.Addr{firstAutoSource, nthAddr(firstAutoSource, need-1)}))
	return nil, "", fmt.Errorf("connection budget: concurrency puts up to %d connections on %s at once, and %s only %d to it before connect() slows about 100-fold (half of %s, less tuples held in TIME_WAIT): %s, widen net.ipv4.ip_local_port_range, or spread the load over more server ports (--url)",
		worst.Conns, worst.Addr, what, worst.Conns-short, pr, how)
}

// nthAddr is a advanced by n addresses.
func nthAddr(a netip.Addr, n int) netip.Addr {
	for ; n > 0; n-- {
		a = a.Next()
	}
	return a
}

// connDests spreads concurrency c over the run's URLs (a request goes to URL session mod
// len(urls): as many to each, give or take one) and sums those that reach the same server
// address.
func connDests(c int, addrs []netip.AddrPort) []connDest {
	if c <= 0 || len(addrs) == 0 {
		return nil
	}
	per := (c + len(addrs) - 1) / len(addrs)
	var out []connDest
	idx := map[netip.AddrPort]int{}
	for _, a := range addrs {
		i, ok := idx[a]
		if !ok {
			i = len(out)
			idx[a] = i
			out = append(out, connDest{Addr: a})
		}
		out[i].Conns = min(out[i].Conns+per, c)
	}
	return out
}

// readPortRange reads the kernel's ephemeral-port settings; ok is false where there are none
// to read (not Linux).
func readPortRange() (pr portRange, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return pr, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return pr, false
	}
	if pr.Lo, err = strconv.Atoi(f[0]); err != nil {
		return pr, false
	}
	if pr.Hi, err = strconv.Atoi(f[1]); err != nil || pr.Hi < pr.Lo {
		return pr, false
	}
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_reserved_ports"); err == nil {
		pr.Reserved = reservedIn(strings.TrimSpace(string(b)), pr.Lo, pr.Hi)
	}
	pr.TWReuse = 2 // the default since Linux 4.19
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_tw_reuse"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pr.TWReuse = v
		}
	}
	return pr, true
}

// reservedIn counts the ports of list (ip_local_reserved_ports: "8000,9000-9010") in [lo, hi].
func reservedIn(list string, lo, hi int) int {
	n := 0
	for _, item := range strings.Split(list, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(item), "-")
		x, err := strconv.Atoi(a)
		if err != nil {
			continue
		}
		y := x
		if isRange {
			if y, err = strconv.Atoi(b); err != nil {
				continue
			}
		}
		n += max(min(y, hi)-max(x, lo)+1, 0)
	}
	return n
}

// readTimeWait counts the tuples in TIME_WAIT towards dests by source address, from
// /proc/net/tcp and tcp6 (nil where they cannot be read).
func readTimeWait(dests []connDest) map[twKey]int {
	want := map[netip.AddrPort]bool{}
	for _, d := range dests {
		want[d.Addr] = true
	}
	tw := map[twKey]int{}
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// "sl local_address rem_address st ...": addresses in the kernel's byte order.
			fs := strings.Fields(sc.Text())
			if len(fs) < 4 || fs[3] != "06" { // TCP_TIME_WAIT
				continue
			}
			src, ok1 := procAddr(fs[1])
			dst, ok2 := procAddr(fs[2])
			if ok1 && ok2 && want[dst] {
				tw[twKey{src.Addr(), dst}]++
				tw[twKey{netip.Addr{}, dst}]++ // whatever the source: the kernel's choice
			}
		}
		f.Close()
	}
	return tw
}

// procAddr parses an address of /proc/net/tcp ("0100007F:1F90": 32-bit words in host order,
// read here as little-endian; on a big-endian host the addresses come out swapped, match no
// destination and count nothing).
func procAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	b, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if err != nil || perr != nil || len(b)%4 != 0 {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}

// setupSources applies the connection budget before anything is sent: a run whose
// concurrency c puts more connections on a server address than its source addresses open
// cheaply is spread over loopback sources (Options.LocalAddrs, said in one line and in
// run.json's options.local_addrs_note) or refused. hostports are the targets' host:port.
// Where the kernel's settings cannot be read or a target does not resolve, nothing is
// decided here (the workers report a target that does not resolve).
func (r *Replay) setupSources(c int, hostports []string) error {
	o := &r.opts
	pr, ok := o.portRange, o.portRange.Hi > 0
	if !ok {
		if pr, ok = readPortRange(); !ok {
			return nil
		}
	}
	aps := make([]netip.AddrPort, 0, len(hostports))
	for _, hp := range hostports {
		ap, err := http1.ResolveAddr(hp)
		if err != nil {
			return nil
		}
		aps = append(aps, ap)
	}
	dests := connDests(c, aps)
	var tw map[twKey]int
	for _, d := range dests {
		if !pr.reusesTimeWait(d.Addr.Addr()) {
			tw = readTimeWait(dests)
			break
		}
	}
	spread, note, err := planSources(dests, o.LocalAddrs, pr, tw)
	if err != nil {
		return err
	}
	if spread != nil {
		if err := checkLocalAddrs(spread); err != nil {
			return fmt.Errorf("%s; but %w", note, err)
		}
		o.LocalAddrs, r.sourcesNote = spread, note
		r.notice("replay: " + note)
	}
	return nil
}
