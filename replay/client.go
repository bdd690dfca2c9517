package replay

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/rawlog"
)

// The worker's HTTP/1.1 client. net/http costs allocations and goroutine hand-offs on every
// read and hides when each read returned; this client writes a pre-rendered head and the body
// straight from the plan mapping with one writev, then reads the socket into a fixed buffer,
// timestamping each read before parsing it. See BenchmarkReadPath for the comparison.

// Connection reuse strategies (AIPerf's --connection-reuse-strategy).
const (
	ReusePooled = "pooled"               // keep-alive connections shared by all requests of a worker
	ReuseNever  = "never"                // a new connection per request, "Connection: close"
	ReuseSticky = "sticky-user-sessions" // one connection per session, kept across its turns
)

// target is one base URL and the request heads rendered for it, one per plan path.
type target struct {
	scheme string
	addr   string // host:port to dial
	host   string // Host header / TLS server name
	heads  [][]byte
	tls    *tls.Config
}

// headConfig is what goes into every request head.
type headConfig struct {
	method        string
	paths         []string
	headers       [][2]string // fixed headers, in order, already merged and validated
	closeConn     bool        // send Connection: close (never strategy)
	userAgent     string
	sessionHeader string
}

// newTarget parses a base URL and renders its request heads. The head ends just before the
// Content-Length value, which is appended per request.
func newTarget(raw string, hc *headConfig, tcfg *tls.Config) (*target, error) {
	base, err := endpoint.ParseBase(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redactURL(raw), err)
	}
	u, err := url.Parse(base.Origin()) // checked by ParseBase
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redactURL(raw), errors.Unwrap(err))
	}
	t := &target{scheme: u.Scheme}
	t.host = u.Host
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		c := tcfg.Clone()
		if c.ServerName == "" {
			c.ServerName = u.Hostname()
		}
		c.NextProtos = []string{"http/1.1"}
		t.tls = c
	}
	for _, p := range hc.paths {
		var b []byte
		b = append(b, hc.method...)
		b = append(b, ' ')
		b = append(b, base.Target(p)...)
		b = append(b, " HTTP/1.1\r\nHost: "...)
		b = append(b, t.host...)
		b = append(b, "\r\n"...)
		if hc.userAgent != "" {
			b = append(b, "User-Agent: "...)
			b = append(b, hc.userAgent...)
			b = append(b, "\r\n"...)
		}
		for _, h := range hc.headers {
			b = append(b, h[0]...)
			b = append(b, ": "...)
			b = append(b, h[1]...)
			b = append(b, "\r\n"...)
		}
		if hc.closeConn {
			b = append(b, "Connection: close\r\n"...)
		}
		b = append(b, "Content-Length: "...)
		t.heads = append(t.heads, b)
	}
	return t, nil
}

// mergeHeaders builds the fixed header list: the plan's headers, then the user's (-H, which
// replace a plan header of the same name), then the API key unless the user set that header:
// "Authorization: Bearer KEY", or "x-api-key: KEY" for Anthropic's Messages API (the headers
// carry anthropic-version: the plan's for anthropic_messages, or the user's for a raw or
// template plan aimed at it). Content-Type defaults to application/json. Hop-by-hop and
// framing headers are refused: the client owns them.
func mergeHeaders(plan map[string]string, user []string, apiKey string) ([][2]string, error) {
	type kv struct{ k, v string }
	var out []kv
	index := map[string]int{}
	set := func(k, v string) {
		lk := strings.ToLower(k)
		if i, ok := index[lk]; ok {
			out[i] = kv{k, v}
			return
		}
		index[lk] = len(out)
		out = append(out, kv{k, v})
	}
	keys := make([]string, 0, len(plan))
	for k := range plan {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkHeader(k, plan[k]); err != nil {
			return nil, fmt.Errorf("plan header: %w", err)
		}
		set(k, plan[k])
	}
	for _, h := range user {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			// Never echo the value: a malformed credential header is still a credential.
			name, _, _ := strings.Cut(strings.TrimSpace(h), " ")
			return nil, fmt.Errorf("header starting %q: want 'Name: value'", strings.TrimSuffix(name, ":"))
		}
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
		set(k, v)
	}
	if apiKey != "" {
		name, value := "Authorization", "Bearer "+apiKey
		if _, anthropic := index["anthropic-version"]; anthropic {
			name, value = "x-api-key", apiKey
		}
		if _, ok := index[strings.ToLower(name)]; !ok {
			if strings.ContainsAny(apiKey, "\r\n") {
				return nil, errors.New("API key contains a line break")
			}
			set(name, value)
		}
	}
	if _, ok := index["content-type"]; !ok {
		set("Content-Type", "application/json")
	}
	res := make([][2]string, len(out))
	for i, h := range out {
		res[i] = [2]string{h.k, h.v}
	}
	return res, nil
}

func checkHeader(k, v string) error {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return fmt.Errorf("header name %q is not a valid token", k)
		}
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("header %s: value contains a line break", k)
	}
	switch strings.ToLower(k) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer":
		return fmt.Errorf("header %s is set by replay and cannot be given", k)
	}
	return nil
}

// loadTLSConfig builds the client TLS configuration.
func loadTLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	c := &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificates found", caFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// conn is one connection to a target.
type conn struct {
	nc     net.Conn
	target int
	used   bool // carried a request before
	broken bool // must not be reused
	// raw is the TCP socket under nc (nil when unknown), and peek the function that looks
	// at it without reading (made once per connection, so a look allocates nothing).
	raw   syscall.RawConn
	peek  func(fd uintptr) bool
	ahead bool // what peek saw: bytes or the server's close
	pbuf  [1]byte
	// uses counts the responses it carried; idleSinceNs is when the last one ended (run
	// clock): what connPolicy.serverClosed judges a close by.
	uses        int
	idleSinceNs int64
}

// unsolicited reports whether bytes, or the server's close, came on c while it was idle:
// a response to no request (a hostile or broken server sending ahead), which the next
// request must not take for its own, or a connection the server has closed. Either way c
// is not to be reused. It costs one non-blocking system call and allocates nothing.
func (c *conn) unsolicited() bool {
	if c.raw == nil {
		return false
	}
	c.nc.SetReadDeadline(time.Time{}) // a past deadline would refuse the look
	c.ahead = false
	if err := c.raw.Read(c.peek); err != nil {
		return true
	}
	return c.ahead
}

// pool keeps idle keep-alive connections per target. Connections are taken LIFO so the
// warmest one is reused.
type pool struct {
	mu   sync.Mutex
	idle [][]*conn
	// closed, when set, is told of each idle connection get found closed (or sent to)
	// by the server: what teaches a URL's connection policy (connpolicy.go).
	closed func(*conn)
}

// get takes the warmest idle connection to target that nothing came on while it was idle
// (unsolicited: those are closed), or nil.
func (p *pool) get(target int) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		s := p.idle[target]
		if len(s) == 0 {
			return nil
		}
		c := s[len(s)-1]
		s[len(s)-1] = nil
		p.idle[target] = s[:len(s)-1]
		if !c.unsolicited() {
			return c
		}
		c.nc.Close()
		if p.closed != nil {
			p.closed(c)
		}
	}
}

func (p *pool) put(c *conn) {
	p.mu.Lock()
	p.idle[c.target] = append(p.idle[c.target], c)
	p.mu.Unlock()
}

// drop closes the idle connections to target.
func (p *pool) drop(target int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.idle[target] {
		c.nc.Close()
		p.idle[target][i] = nil
	}
	p.idle[target] = p.idle[target][:0]
}

func (p *pool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.idle {
		for _, c := range s {
			c.nc.Close()
		}
		p.idle[i] = nil
	}
}

// dial opens a connection to target t, with the TLS handshake for https, before deadline.
func dial(ctx context.Context, d *net.Dialer, t *target, idx int, deadline time.Time) (*conn, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	c := &conn{target: idx}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if raw, err := tc.SyscallConn(); err == nil {
			c.raw = raw
			c.peek = func(fd uintptr) bool {
				c.ahead = peekPending(fd, &c.pbuf)
				return true
			}
		}
	}
	if t.tls != nil {
		tc := tls.Client(nc, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	c.nc = nc
	return c, nil
}

// exchangeBuffers is the per-runner memory an exchange reuses: nothing in it is allocated
// per request once it has grown to the largest response seen.
type exchangeBuffers struct {
	rbuf   []byte      // socket reads land here
	suffix []byte      // Content-Length value, session header, final CRLF
	bufs   [3][]byte   // backing array for wv
	wv     net.Buffers // head, suffix, body for writev
	// maxBody is the most response body bytes a request stores (Options.MaxResponseBytes;
	// 0 means DefaultMaxResponseBytes), and maxBody/readEntryBytes the most reads it records.
	maxBody int
	// onBody, when set, is given the response body after each read that added to it, until
	// it returns true (the first token came: the request leaves prefill,
	// --prefill-concurrency); it is then cleared. The runner clears it after the request too.
	onBody func(body []byte) bool
}

// readEntryBytes is what one read costs in a Request record: its time and its end offset.
const readEntryBytes = 12

// minMaxReads is the fewest reads a request may record, however small the body limit.
const minMaxReads = 1024

// limits returns the body and read limits of a request.
func (eb *exchangeBuffers) limits() (maxBody, maxReads int) {
	maxBody = eb.maxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBytes
	}
	return maxBody, max(maxBody/readEntryBytes, minMaxReads)
}

// exchangeResult classifies how an exchange ended, for the caller to map onto an outcome.
type exchangeResult uint8

const (
	exOK        exchangeResult = iota
	exNetError                 // transport error; err says which
	exDeadline                 // a deadline fired: timeout, cancel-after or abort, the caller knows which
	exProtocol                 // the server broke HTTP/1.1
	exStaleConn                // a reused connection was closed before any response byte: retry
	exTooLarge                 // the response outgrew what a request may store; err says which limit
)

// errInterimTooLarge ends a response whose interim (1xx) heads outgrow the read buffer.
var errInterimTooLarge = errors.New("interim (1xx) response heads exceed the 32 KiB read buffer")

// Why a response was too large to store (exTooLarge).
var (
	errBodyTooLarge = errors.New("response body over the limit")
	errTooManyReads = errors.New("response took more reads than the limit")
)

// renderSuffix renders what follows a request head: the Content-Length value for body, the
// session header, and the empty line.
func (eb *exchangeBuffers) renderSuffix(body []byte, sessionHeader string, session uint32) {
	eb.suffix = strconv.AppendUint(eb.suffix[:0], uint64(len(body)), 10)
	eb.suffix = append(eb.suffix, "\r\n"...)
	if sessionHeader != "" {
		eb.suffix = append(eb.suffix, sessionHeader...)
		eb.suffix = append(eb.suffix, ": "...)
		eb.suffix = strconv.AppendUint(eb.suffix, uint64(session), 10)
		eb.suffix = append(eb.suffix, "\r\n"...)
	}
	eb.suffix = append(eb.suffix, "\r\n"...)
}

// exchange writes one request on c and reads its response into q (Status, WriteStartNs,
// WriteEndNs, HeaderNs, ReadNs, ReadEnd, Body). It allocates nothing on success. now returns
// nanoseconds on the run's clock. afterWrite is called once the request is written, to set
// the read deadline.
func exchange(c *conn, head, body []byte, sessionHeader string, session uint32, eb *exchangeBuffers,
	q *rawlog.Request, now func() int64, afterWrite func(writeEnd int64)) (exchangeResult, error) {
	eb.renderSuffix(body, sessionHeader, session)
	eb.bufs[0], eb.bufs[1], eb.bufs[2] = head, eb.suffix, body
	eb.wv = eb.bufs[:]
	q.WriteStartNs = now()
	_, err := eb.wv.WriteTo(c.nc)
	q.WriteEndNs = now()
	eb.bufs[2] = nil // do not keep the mapping referenced
	if err != nil {
		return classifyNetErr(c, err, false)
	}
	afterWrite(q.WriteEndNs)

	var rp respParser
	rp.reset(eb)
	for {
		n, err := c.nc.Read(rp.space(eb, q))
		t := now()
		if n > 0 {
			end, res, perr := rp.onRead(c, eb, n, t, q)
			if eb.onBody != nil && len(q.Body) > 0 && eb.onBody(q.Body) {
				eb.onBody = nil
			}
			if end {
				return res, perr
			}
		}
		if err != nil {
			return rp.onEnd(c, err)
		}
	}
}

// respParser follows one response through the reads that bring it, whichever client makes
// them: the net client's blocking reads or the event loop's non-blocking ones. Reads land in
// space(eb, q); onRead takes each one with the instant it returned, onEnd the error or EOF
// that ended the reads. Once the head is parsed, reads go straight into the spare capacity
// of the body buffer (q.Body), where the decoder removes the transfer coding in place: a
// body byte is written once, by the read, and moved at most over the chunk framing before
// it (bodyDecoder.put).
type respParser struct {
	h        respHead
	dec      bodyDecoder
	maxBody  int
	maxReads int
	filled   int  // bytes of head accumulated in eb.rbuf
	interim  int  // bytes of the interim (1xx) heads dropped so far
	headDone bool // the final response head was parsed
	got      bool // any response byte arrived
	direct   bool // the last space was q.Body's spare capacity
}

// reset prepares p for a new response, with eb's limits.
func (p *respParser) reset(eb *exchangeBuffers) {
	*p = respParser{}
	p.maxBody, p.maxReads = eb.limits()
}

// space is where the next read goes: the read buffer until the head is parsed, then the
// body buffer's spare capacity, grown to at least minDirectRead within the body limit (and
// the read buffer again at the limit, where only framing and excess bytes may still come).
func (p *respParser) space(eb *exchangeBuffers, q *rawlog.Request) []byte {
	p.direct = false
	if !p.headDone {
		return eb.rbuf[p.filled:]
	}
	b := q.Body
	if room := min(cap(b), p.maxBody) - len(b); room < minDirectRead && cap(b) < p.maxBody {
		n := min(max(2*cap(b), len(b)+minDirectRead), p.maxBody)
		grown := make([]byte, len(b), n)
		copy(grown, b)
		b, q.Body = grown, grown
		p.dec.grewBig = p.dec.grewBig || n > bigGrowth // as bodyDecoder.put grows it
	}
	if room := min(cap(b), p.maxBody) - len(b); room > 0 {
		p.direct = true
		return b[len(b) : len(b)+room]
	}
	return eb.rbuf
}

// onRead takes n bytes read into space(eb, q) at t. end says the exchange is over, with res and
// err saying how.
func (p *respParser) onRead(c *conn, eb *exchangeBuffers, n int, t int64, q *rawlog.Request) (end bool, res exchangeResult, err error) {
	p.got = true
	buf := eb.rbuf
	if !p.headDone {
		from := p.filled - 3
		p.filled += n
		for {
			e, tl := findHeadEnd(buf[:p.filled], from)
			if e < 0 {
				break
			}
			if perr := parseHead(buf[:e], &p.h); perr != nil {
				c.broken = true
				return true, exProtocol, perr
			}
			rest := buf[e+tl : p.filled]
			if p.h.status == 101 {
				c.broken = true
				return true, exProtocol, errors.New("server switched protocols (101)")
			}
			if p.h.status < 200 {
				// Interim response (100 Continue, 103 Early Hints): drop it; the final
				// head may already be in what is left. All the heads of a response fit the
				// read buffer together, so a flood of them ends it instead of the timeout.
				if p.interim += e + tl; p.interim > len(buf) {
					c.broken = true
					return true, exProtocol, errInterimTooLarge
				}
				p.filled = copy(buf, rest)
				from = 0
				continue
			}
			p.headDone = true
			q.Status = p.h.status
			q.HeaderNs = t
			p.dec.reset(&p.h, p.maxBody)
			p.filled = 0
			if len(rest) > 0 {
				if res, stop, err := takeBody(c, &p.dec, q, rest, t, p.maxReads); stop {
					return true, res, err
				}
			}
			break
		}
		if !p.headDone {
			if p.filled == len(buf) {
				c.broken = true
				return true, exProtocol, errHeaderTooLarge
			}
			return false, exOK, nil
		}
	} else {
		var in []byte
		if p.direct {
			in = q.Body[len(q.Body) : len(q.Body)+n]
		} else {
			in = buf[:n]
		}
		if res, stop, err := takeBody(c, &p.dec, q, in, t, p.maxReads); stop {
			return true, res, err
		}
	}
	if p.dec.done() {
		if !p.h.keepAlive || p.dec.excess {
			c.broken = true
		}
		return true, exOK, nil
	}
	return false, exOK, nil
}

// onEnd takes the error (io.EOF at the server's close) that ended the reads before onRead
// said the exchange was over.
func (p *respParser) onEnd(c *conn, err error) (exchangeResult, error) {
	if err == io.EOF && p.headDone && p.dec.framing == frameClose {
		c.broken = true
		return exOK, nil
	}
	return classifyNetErr(c, err, p.got)
}

// takeBody decodes p, the body bytes of one read that returned at t, into q and records the
// read. stop says the exchange ends here: the framing is broken (exProtocol), or the response
// outgrew what a request may store (exTooLarge: the body is kept up to its limit, and c is
// closed, since the rest of the response is never read).
func takeBody(c *conn, dec *bodyDecoder, q *rawlog.Request, p []byte, t int64, maxReads int) (exchangeResult, bool, error) {
	if len(q.ReadNs) >= maxReads {
		c.broken = true
		return exTooLarge, true, errTooManyReads
	}
	var err error
	q.Body, err = dec.feed(q.Body, p)
	if n := len(q.ReadNs); n == cap(q.ReadNs) || n == cap(q.ReadEnd) {
		dec.grewBig = growReads(q, maxReads) || dec.grewBig
	}
	if dec.grewBig {
		dec.grewBig = false
		releaseGarbage() // the old copies are unreachable now
	}
	q.ReadNs = append(q.ReadNs, t)
	q.ReadEnd = append(q.ReadEnd, uint32(len(q.Body)))
	switch {
	case err != nil:
		c.broken = true
		return exProtocol, true, err
	case dec.over:
		c.broken = true
		return exTooLarge, true, errBodyTooLarge
	}
	return exOK, false, nil
}

// growReads makes room in q's read table for at least one more read, doubling it up to
// maxReads entries: like the body (bodyDecoder.put), the table never grows past what the
// limit allows. It reports whether it grew past bigGrowth bytes (the caller then releases
// the old copy).
func growReads(q *rawlog.Request, maxReads int) bool {
	n := min(max(2*cap(q.ReadNs), 256), maxReads)
	ns, ends := make([]int64, len(q.ReadNs), n), make([]uint32, len(q.ReadEnd), n)
	copy(ns, q.ReadNs)
	copy(ends, q.ReadEnd)
	q.ReadNs, q.ReadEnd = ns, ends
	return readEntryBytes*n > bigGrowth
}

// classifyNetErr marks c broken and says what kind of failure err is.
func classifyNetErr(c *conn, err error, gotBytes bool) (exchangeResult, error) {
	c.broken = true
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return exDeadline, err
	}
	if c.used && !gotBytes && (err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		return exStaleConn, err
	}
	if err == io.EOF {
		return exNetError, io.ErrUnexpectedEOF
	}
	return exNetError, err
}

// errText shortens a network error for the log: the operation and addresses that net.OpError
// adds are the same for every request of a run. Any other error is logged with the URLs in
// it redacted (an HTTP client's errors name the request URL, query and all).
func errText(err error) string { return errline.Net(err) }

// failText is the Err of a request that failed with res and err (not a timeout or an abort);
// prefix names the step that failed ("connect: "). A failure of the client's own resources
// says so, so that it is never taken for the server's.
func failText(res exchangeResult, err error, prefix string, bodyLen int, eb *exchangeBuffers) string {
	if res == exTooLarge {
		maxBody, maxReads := eb.limits()
		if err == errTooManyReads {
			return fmt.Sprintf("response too large: more than %d reads (max-response-bytes %d allows one per %d bytes); the first %d body bytes are kept",
				maxReads, maxBody, readEntryBytes, bodyLen)
		}
		return fmt.Sprintf("response too large: body over max-response-bytes (%d bytes); the first %d bytes are kept", maxBody, bodyLen)
	}
	text := prefix + errText(err)
	if hint := clientFault(err); hint != "" {
		return ClientErrorPrefix + text + " (" + hint + ")"
	}
	return text
}

// closedFirst is the failure of a fresh connection the server closed before the client wrote
// its request: after is how long after connect() began the client found it closed, late how
// long the client had been working without looking at its connections (the event loop's
// pass before; 0 where unknown).
type closedFirst struct{ after, late int64 }

func (e *closedFirst) Error() string {
	return fmt.Sprintf("the server closed the connection before the request was written, %s after connect() began", time.Duration(e.after).Round(time.Millisecond))
}

// lateLoopNs is how long the client may work without looking at its connections before a
// server's close of a connection that sent nothing yet counts as the client's fault: servers
// time out a silent connection in seconds (Go's ReadHeaderTimeout, mockllm's 10 s; nginx's
// client_header_timeout, 60 s), none within one.
const lateLoopNs = int64(time.Second)

// ClientErrorPrefix starts the Err of a request that failed for want of the client's own
// resources (file descriptors, local ports, socket buffers): the server had no part in it.
const ClientErrorPrefix = "client error: "

// clientFault says which of the client's own resources ran out when err is a local resource
// failure rather than anything the server or the network did; "" otherwise.
func clientFault(err error) string {
	var cf *closedFirst
	switch {
	case errors.As(err, &cf) && cf.late >= lateLoopNs:
		return fmt.Sprintf("the client worked %s without looking at its connections, and the server closed this one for sending nothing: a machine too loaded for the run, or connect() slowed by the connection budget (docs/distributed.md)",
			time.Duration(cf.late).Round(time.Millisecond))
	case errors.Is(err, syscall.EMFILE):
		return "this process is out of file descriptors: raise the open-file limit, e.g. ulimit -n 65536"
	case errors.Is(err, syscall.ENFILE):
		return "the system is out of file descriptors: raise fs.file-max"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "out of local ports: widen net.ipv4.ip_local_port_range, or reuse connections"
	case errors.Is(err, syscall.ENOBUFS), errors.Is(err, syscall.ENOMEM):
		return "the kernel is out of socket buffer memory"
	}
	return ""
}
