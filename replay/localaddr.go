package replay

import (
	"fmt"
	"net/netip"
	"strings"
)

// Source addresses (--local-addr). A TCP connection is one 4-tuple (source address and port,
// destination address and port), so one source address reaches one server port through at
// most the ~28,000 ports of the kernel's ephemeral range. Spreading connections over several
// source addresses (127.0.0.2-127.0.0.9 on loopback, or addresses assigned to the NIC)
// multiplies that. Each socket is bound to the next address of a round-robin picker with
// IP_BIND_ADDRESS_NO_PORT, so the kernel picks the port at connect time per 4-tuple instead
// of reserving it at bind time across every address.

// maxLocalAddrs bounds a --local-addr list, so that a typo such as 10.0.0.1-10.9.0.1 is
// refused instead of allocating millions of addresses.
const maxLocalAddrs = 65536

// ParseLocalAddrs parses a --local-addr list: comma-separated IP addresses and inclusive
// ranges of one family ("127.0.0.2-127.0.0.9,10.0.0.5,fd00::1-fd00::4"). Addresses must be
// listed once; the list keeps their order.
func ParseLocalAddrs(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("local-addr %q: empty item", s)
		}
		loS, hiS, isRange := strings.Cut(part, "-")
		lo, err := netip.ParseAddr(strings.TrimSpace(loS))
		if err != nil {
			return nil, fmt.Errorf("local-addr %q: %q is not an IP address", s, loS)
		}
		lo = lo.Unmap()
		hi := lo
		if isRange {
			if hi, err = netip.ParseAddr(strings.TrimSpace(hiS)); err != nil {
				return nil, fmt.Errorf("local-addr %q: %q is not an IP address", s, hiS)
			}
			hi = hi.Unmap()
			if lo.Is4() != hi.Is4() {
				return nil, fmt.Errorf("local-addr %q: range %s mixes IPv4 and IPv6", s, part)
			}
			if hi.Less(lo) {
				return nil, fmt.Errorf("local-addr %q: range %s runs backwards", s, part)
			}
		}
		if lo.Zone() != "" || hi.Zone() != "" {
			return nil, fmt.Errorf("local-addr %q: %s: zoned addresses are not supported", s, part)
		}
		for a := lo; ; a = a.Next() {
			if seen[a] {
				return nil, fmt.Errorf("local-addr %q: %s listed twice", s, a)
			}
			seen[a] = true
			out = append(out, a)
			if len(out) > maxLocalAddrs {
				return nil, fmt.Errorf("local-addr %q: more than %d addresses", s, maxLocalAddrs)
			}
			if a == hi {
				break
			}
		}
	}
	return out, nil
}

// FormatLocalAddrs writes addrs back as a list, runs of consecutive addresses as ranges.
func FormatLocalAddrs(addrs []netip.Addr) string {
	var b strings.Builder
	for i := 0; i < len(addrs); {
		j := i
		for j+1 < len(addrs) && addrs[j+1] == addrs[j].Next() {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(addrs[i].String())
		if j > i {
			b.WriteByte('-')
			b.WriteString(addrs[j].String())
		}
		i = j + 1
	}
	return b.String()
}
