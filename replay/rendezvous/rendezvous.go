// Package rendezvous lets the shards of a distributed replay meet before they start, so that
// a late shard (a slow image pull, a busy scheduler) only delays the start instead of failing
// the run. Shard 0 listens on HOST:PORT and every other shard connects to it once its workers
// are ready; each reports its shard identity, plan hash and clock state. When all N are
// there, shard 0 measures the round trip and the clock offset to each, refuses shards whose
// plans or identities disagree and clocks that disagree by more than the plan's first gap,
// then picks one start instant a safe margin ahead (RTTFactor × the slowest round trip +
// Lead) and sends it to all. Every shard then runs exactly as with a fixed --start-at.
//
// If a shard does not arrive within the timeout, every waiting shard gives up naming the
// missing indexes; if one leaves (dies) before the start, the others give up. Nothing is sent
// to the server in either case: Meet returns before the workers are told any instant.
//
// The protocol is newline-delimited JSON over one TCP connection per shard, versioned
// (Version); docs/distributed.md holds the message table.
package rendezvous

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/schedule"
)

// Defaults, in one place.
const (
	// DefaultTimeout is how long a shard waits for every other shard to arrive.
	DefaultTimeout = 10 * time.Minute
	// DefaultLead and RTTFactor make the start instant: shard 0's now + RTTFactor × the
	// slowest round trip measured + DefaultLead, so that the start message reaches every
	// shard, and every shard's workers, well before it.
	DefaultLead = 50 * time.Millisecond
	RTTFactor   = 4
	// ClosedLoopClockTolerance is the clock disagreement accepted for a plan without a first
	// gap (a closed loop: no planned instant after t = 0 to keep in order across shards).
	ClosedLoopClockTolerance = 10 * time.Millisecond
	// Pings is how many round trips shard 0 measures to each shard; the fastest one gives
	// the clock offset (its error is at most half that round trip).
	Pings = 5
)

// Limits on what a peer can make shard 0 do.
const (
	// helloTimeout is how long a new connection may take to say who it is.
	helloTimeout = 30 * time.Second
	// pongTimeout bounds one round trip of the measurement.
	pongTimeout = 10 * time.Second
	// writeTimeout bounds one message written to a peer.
	writeTimeout = 10 * time.Second
	// maxPending is how many connections that have not said who they are may be open at once;
	// more are closed at once.
	maxPending = 64
	// dialTimeout bounds one connection attempt to shard 0.
	dialTimeout = 5 * time.Second
)

// ErrStopped is returned when the stop channel closed while waiting: nothing was sent.
var ErrStopped = errors.New("rendezvous: interrupted before the start")

// Config describes this shard at the rendezvous.
type Config struct {
	// Addr is shard 0's HOST:PORT. Shard 0 listens on it when HOST is an IP address, else
	// on PORT on every interface (a name such as a Kubernetes pod's DNS name may not resolve
	// to the shard itself while it starts); the others connect to it.
	Addr string
	// Index and Count are this shard's identity, 0 <= Index < Count.
	Index, Count int
	// PlanHash is the plan's identity (hex SHA-256); every shard must have the same.
	PlanHash string
	// RunID names the distributed run; every shard must have the same ("" included).
	RunID string
	// Host names this machine in messages (os.Hostname).
	Host string
	// Clock is this shard's kernel clock state, reported to shard 0 (nil: unknown).
	Clock *rawlog.ClockState
	// Gap is the plan's first gap: two shards' clocks may disagree by at most this much
	// (ClosedLoopClockTolerance when 0), and a shard refuses a start instant it receives
	// more than this late.
	Gap time.Duration
	// Timeout bounds the wait for every shard (0: DefaultTimeout).
	Timeout time.Duration
	// Lead is the fixed part of the start's margin (0: DefaultLead).
	Lead time.Duration
	// Notice receives one-line progress notices; nil discards them.
	Notice func(string)

	// Now is this shard's clock (nil: time.Now). Tests give shards clocks that disagree.
	Now func() time.Time
	// Listen opens shard 0's listener (nil: TCP on the address Addr implies).
	Listen func(addr string) (net.Listener, error)
	// RetryEvery is the pause between attempts to reach shard 0 (0: 250 ms).
	RetryEvery time.Duration
}

// Result is what the rendezvous decided.
type Result struct {
	// Start is the shared start instant (the plan's t = 0).
	Start time.Time
	// MaxRTT is the slowest round trip shard 0 measured; Lead is how far ahead of shard 0's
	// now it put Start.
	MaxRTT, Lead time.Duration
	// ClockOffset is this shard's clock minus shard 0's, as shard 0 measured it (0 on shard
	// 0), within ±ClockOffsetError.
	ClockOffset, ClockOffsetError time.Duration
	// Waited is how long this shard waited at the rendezvous.
	Waited time.Duration
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Config) notice(format string, args ...any) {
	if c.Notice != nil {
		c.Notice(fmt.Sprintf(format, args...))
	}
}

// errf is an error of this rendezvous: "rendezvous ADDR: ...".
func (c *Config) errf(format string, args ...any) error {
	return fmt.Errorf("rendezvous %s: %s", c.Addr, fmt.Sprintf(format, args...))
}

func (c *Config) tolerance() time.Duration {
	if c.Gap > 0 {
		return c.Gap
	}
	return ClosedLoopClockTolerance
}

func (c *Config) check() error {
	switch {
	case c.Count < 1 || schedule.CheckShard(c.Index, c.Count) != schedule.ShardOK: // a rendezvous needs shards
		return fmt.Errorf("rendezvous: shard %d of %d: want 0 <= index < count", c.Index, c.Count)
	case c.PlanHash == "":
		return errors.New("rendezvous: no plan hash")
	}
	if _, port, err := net.SplitHostPort(c.Addr); err != nil || port == "" {
		return fmt.Errorf("rendezvous %q: want HOST:PORT (shard 0's address)", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("rendezvous %q: port %q: want 1-65535", c.Addr, port)
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Lead <= 0 {
		c.Lead = DefaultLead
	}
	if c.RetryEvery <= 0 {
		c.RetryEvery = 250 * time.Millisecond
	}
	return nil
}

// CheckAddr checks a rendezvous address (HOST:PORT) without using it.
func CheckAddr(addr string) error {
	c := Config{Addr: addr, Count: 1, PlanHash: "x"}
	return c.check()
}

// Meet waits at the rendezvous until every shard is ready and returns the start instant
// shard 0 chose, or an error saying why the run will not start (a shard missing after the
// timeout, a shard that left, another plan or shard count, clocks that disagree). Closing
// stop gives up at once with ErrStopped.
func Meet(cfg Config, stop <-chan struct{}) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	if cfg.Index == 0 {
		return cfg.lead(stop)
	}
	return cfg.follow(stop)
}

// listenAddr is where shard 0 listens: Addr itself when its host is an IP address, else the
// port on every interface.
func listenAddr(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if _, err := netip.ParseAddr(host); err == nil {
		return addr
	}
	return net.JoinHostPort("", port)
}

// conn is one connection with its reader and a lock for writers.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	mu sync.Mutex
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, MaxLine)}
}

func (c *conn) send(m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.nc.Write(encode(m))
	return err
}

// shardWord is "shard 3" or "shards 1, 3": the first MaxListed of the n indexes (n >=
// len(idx)) listed, the others counted ("shards 1, 2, ... and 40 more").
func shardWord(idx []int, n int) string {
	n = max(n, len(idx))
	if n == 1 && len(idx) == 1 {
		return "shard " + strconv.Itoa(idx[0])
	}
	listed := idx[:min(len(idx), MaxListed)]
	s := make([]string, len(listed))
	for i, v := range listed {
		s[i] = strconv.Itoa(v)
	}
	w := "shards " + strings.Join(s, ", ")
	if more := n - len(listed); more > 0 {
		w += fmt.Sprintf(" and %d more", more)
	}
	return w
}

// waitTimer returns a channel that fires after d (and the function stopping it).
func waitTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// closeQuietly closes c, ignoring the error (the connection is being abandoned).
func closeQuietly(c io.Closer) { _ = c.Close() }
