package http1

import (
	"errors"
	"fmt"
	"github.com/llmbench/llmbench/internal/errline"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/tracectx"
	"github.com/llmbench/llmbench/rawlog"
)

// Buffers is the per-runner memory an exchange reuses: nothing in it is allocated
// per request once it has grown to the largest response seen.
type Buffers struct {
	rbuf   []byte      // socket reads land here
	suffix []byte      // Content-Length value, session header, final CRLF
	bufs   [3][]byte   // backing array for wv
	wv     net.Buffers // head, suffix, body for writev
	// maxBody is the most response body bytes a request stores (Options.MaxResponseBytes;
	// 0 means DefaultMaxResponseBytes), and maxBody/readEntryBytes the most reads it records.
	maxBody int
	// OnBody, when set, is given the response body after each read that added to it, until
	// it returns true (the first token came: the request leaves prefill,
	// --prefill-concurrency); it is then cleared. The runner clears it after the request too.
	OnBody func(body []byte) bool
	// Trace is the run's trace key: when it is not zero, every request carries a W3C
	// traceparent header naming its plan index's trace (internal/tracectx).
	Trace tracectx.Key
}

// Init gives eb its read buffer and the most response body bytes a request stores (0:
// DefaultMaxResponseBytes).
func (eb *Buffers) Init(maxBody int64) {
	eb.rbuf = make([]byte, readBufSize)
	eb.maxBody = int(maxBody)
}

// Suffix is what RenderSuffix rendered last.
func (eb *Buffers) Suffix() []byte { return eb.suffix }

// readEntryBytes is what one read costs in a Request record: its time and its end offset.
const readEntryBytes = 12

// minMaxReads is the fewest reads a request may record, however small the body limit.
const minMaxReads = 1024

// limits returns the body and read limits of a request.
func (eb *Buffers) limits() (maxBody, maxReads int) {
	maxBody = eb.maxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxResponseBytes
	}
	return maxBody, max(maxBody/readEntryBytes, minMaxReads)
}

// Result classifies how an exchange ended, for the caller to map onto an outcome.
type Result uint8

const (
	OK        Result = iota
	NetError         // transport error; err says which
	Deadline         // a deadline fired: timeout, cancel-after or abort, the caller knows which
	Protocol         // the server broke HTTP/1.1
	StaleConn        // a reused connection was closed before any response byte: retry
	TooLarge         // the response outgrew what a request may store; err says which limit
)

// errInterimTooLarge ends a response whose interim (1xx) heads outgrow the read buffer.
var errInterimTooLarge = errors.New("interim (1xx) response heads exceed the 32 KiB read buffer")

// Why a response was too large to store (TooLarge).
var (
	errBodyTooLarge = errors.New("response body over the limit")
	errTooManyReads = errors.New("response took more reads than the limit")
)

// RenderSuffix renders what follows a request head: the Content-Length value for body, the
// session header, the traceparent of plan index (when eb.Trace is set), and the empty line.
func (eb *Buffers) RenderSuffix(body []byte, sessionHeader string, session uint32, index uint32) {
	eb.suffix = strconv.AppendUint(eb.suffix[:0], uint64(len(body)), 10)
	eb.suffix = append(eb.suffix, "\r\n"...)
	if sessionHeader != "" {
		eb.suffix = append(eb.suffix, sessionHeader...)
		eb.suffix = append(eb.suffix, ": "...)
		eb.suffix = strconv.AppendUint(eb.suffix, uint64(session), 10)
		eb.suffix = append(eb.suffix, "\r\n"...)
	}
	if !eb.Trace.IsZero() {
		eb.suffix = appendTraceparent(eb.suffix, eb.Trace, index)
	}
	eb.suffix = append(eb.suffix, "\r\n"...)
}

// appendTraceparent appends the traceparent header line of plan index under key; it
// allocates nothing once dst has grown to hold it.
func appendTraceparent(dst []byte, key tracectx.Key, index uint32) []byte {
	dst = append(dst, tracectx.HeaderName...)
	dst = append(dst, ": "...)
	dst = key.AppendTraceparent(dst, index)
	return append(dst, "\r\n"...)
}

// Exchange writes one request on c and reads its response into q (Status, WriteStartNs,
// WriteEndNs, HeaderNs, ReadNs, ReadEnd, Body). It allocates nothing on success. now returns
// nanoseconds on the run's clock. afterWrite is called once the request is written, to set
// the read deadline.
func Exchange(c *NetConn, head, body []byte, sessionHeader string, session uint32, eb *Buffers,
	q *rawlog.Request, now func() int64, afterWrite func(writeEnd int64)) (Result, error) {
	if err := eb.Write(c.NC, head, body, sessionHeader, session, q, now); err != nil {
		return ClassifyNetErr(&c.Conn, err, false)
	}
	afterWrite(q.WriteEndNs)

	var rp Parser
	rp.Reset(eb)
	for {
		n, err := c.NC.Read(rp.Space(eb, q))
		t := now()
		if n > 0 {
			end, res, perr := rp.OnRead(&c.Conn, eb, n, t, q)
			if eb.OnBody != nil && len(q.Body) > 0 && eb.OnBody(q.Body) {
				eb.OnBody = nil
			}
			if end {
				return res, perr
			}
		}
		if err != nil {
			return rp.OnEnd(&c.Conn, err)
		}
	}
}

// Write writes one request (head, the suffix RenderSuffix renders for body, body) on nc with
// one writev, and sets q's WriteStartNs and WriteEndNs.
func (eb *Buffers) Write(nc net.Conn, head, body []byte, sessionHeader string, session uint32, q *rawlog.Request, now func() int64) error {
	eb.RenderSuffix(body, sessionHeader, session, q.Index)
	eb.bufs[0], eb.bufs[1], eb.bufs[2] = head, eb.suffix, body
	eb.wv = eb.bufs[:]
	q.WriteStartNs = now()
	_, err := eb.wv.WriteTo(nc)
	q.WriteEndNs = now()
	eb.bufs[2] = nil // do not keep the mapping referenced
	return err
}

// Parser follows one response through the reads that bring it, whichever client makes
// them: the net client's blocking reads or the event loop's non-blocking ones. Reads land in
// space(eb, q); onRead takes each one with the instant it returned, onEnd the error or EOF
// that ended the reads. Once the head is parsed, reads go straight into the spare capacity
// of the body buffer (q.Body), where the decoder removes the transfer coding in place: a
// body byte is written once, by the read, and moved at most over the chunk framing before
// it (bodyDecoder.put).
type Parser struct {
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

// HeadDone says the final response head was parsed.
func (p *Parser) HeadDone() bool { return p.headDone }

// reset prepares p for a new response, with eb's limits.
func (p *Parser) Reset(eb *Buffers) {
	*p = Parser{}
	p.maxBody, p.maxReads = eb.limits()
}

// space is where the next read goes: the read buffer until the head is parsed, then the
// body buffer's spare capacity, grown to at least minDirectRead within the body limit (and
// the read buffer again at the limit, where only framing and excess bytes may still come).
func (p *Parser) Space(eb *Buffers, q *rawlog.Request) []byte {
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
func (p *Parser) OnRead(c *Conn, eb *Buffers, n int, t int64, q *rawlog.Request) (end bool, res Result, err error) {
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
				c.Broken = true
				return true, Protocol, perr
			}
			rest := buf[e+tl : p.filled]
			if p.h.status == 101 {
				c.Broken = true
				return true, Protocol, errors.New("server switched protocols (101)")
			}
			if p.h.status < 200 {
				// Interim response (100 Continue, 103 Early Hints): drop it; the final
				// head may already be in what is left. All the heads of a response fit the
				// read buffer together, so a flood of them ends it instead of the timeout.
				if p.interim += e + tl; p.interim > len(buf) {
					c.Broken = true
					return true, Protocol, errInterimTooLarge
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
				c.Broken = true
				return true, Protocol, errHeaderTooLarge
			}
			return false, OK, nil
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
			c.Broken = true
		}
		return true, OK, nil
	}
	return false, OK, nil
}

// onEnd takes the error (io.EOF at the server's close) that ended the reads before onRead
// said the exchange was over.
func (p *Parser) OnEnd(c *Conn, err error) (Result, error) {
	if err == io.EOF && p.headDone && p.dec.framing == frameClose {
		c.Broken = true
		return OK, nil
	}
	return ClassifyNetErr(c, err, p.got)
}

// takeBody decodes p, the body bytes of one read that returned at t, into q and records the
// read. stop says the exchange ends here: the framing is broken (Protocol), or the response
// outgrew what a request may store (TooLarge: the body is kept up to its limit, and c is
// closed, since the rest of the response is never read).
func takeBody(c *Conn, dec *bodyDecoder, q *rawlog.Request, p []byte, t int64, maxReads int) (Result, bool, error) {
	if len(q.ReadNs) >= maxReads {
		c.Broken = true
		return TooLarge, true, errTooManyReads
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
		c.Broken = true
		return Protocol, true, err
	case dec.over:
		c.Broken = true
		return TooLarge, true, errBodyTooLarge
	}
	return OK, false, nil
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

// ClassifyNetErr marks c broken and says what kind of failure err is.
func ClassifyNetErr(c *Conn, err error, gotBytes bool) (Result, error) {
	c.Broken = true
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Deadline, err
	}
	if c.Used && !gotBytes && (err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		return StaleConn, err
	}
	if err == io.EOF {
		return NetError, io.ErrUnexpectedEOF
	}
	return NetError, err
}

// DefaultRequestTimeout bounds one request, connect to last byte, when nothing else does:
// AIPerf's --request-timeout-seconds default (6 hours).
const DefaultRequestTimeout = 21600 * time.Second

// ErrText shortens a network error for the log (errline.Net, the one definition the
// preflight's messages share): the operation and addresses that net.OpError adds are the
// same for every request of a run; any other error is logged with its URLs redacted.
func ErrText(err error) string { return errline.Net(err) }

// FailText is the Err of a request that failed with res and err (not a timeout or an abort);
// prefix names the step that failed ("connect: "). A failure of the client's own resources
// says so, so that it is never taken for the server's.
func FailText(res Result, err error, prefix string, bodyLen int, eb *Buffers) string {
	if res == TooLarge {
		maxBody, maxReads := eb.limits()
		if err == errTooManyReads {
			return fmt.Sprintf("response too large: more than %d reads (max-response-bytes %d allows one per %d bytes); the first %d body bytes are kept",
				maxReads, maxBody, readEntryBytes, bodyLen)
		}
		return fmt.Sprintf("response too large: body over max-response-bytes (%d bytes); the first %d bytes are kept", maxBody, bodyLen)
	}
	text := prefix + ErrText(err)
	if hint := clientFault(err); hint != "" {
		return ClientErrorPrefix + text + " (" + hint + ")"
	}
	return text
}

// ClosedFirst is the failure of a fresh connection the server closed before the client wrote
// its request: after is how long after connect() began the client found it closed, late how
// long the client had been working without looking at its connections (the event loop's
// pass before; 0 where unknown).
type ClosedFirst struct{ After, Late int64 }

func (e *ClosedFirst) Error() string {
	return fmt.Sprintf("the server closed the connection before the request was written, %s after connect() began", time.Duration(e.After).Round(time.Millisecond))
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
	var cf *ClosedFirst
	switch {
	case errors.As(err, &cf) && cf.Late >= lateLoopNs:
		return fmt.Sprintf("the client worked %s without looking at its connections, and the server closed this one for sending nothing: a machine too loaded for the run, or connect() slowed by the connection budget (docs/distributed.md)",
			time.Duration(cf.Late).Round(time.Millisecond))
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

// retainBody and retainReads bound the response buffers a runner keeps between requests: one
// huge response must not pin its memory for the rest of the run.
const (
	retainBody  = 1 << 20
	retainReads = 1 << 16
)

// ResetResponse empties q's response fields, keeping their buffers unless there are none yet
// or a large response grew them past what is worth keeping.
func ResetResponse(q *rawlog.Request) {
	q.ReadNs, q.ReadEnd, q.Body = q.ReadNs[:0], q.ReadEnd[:0], q.Body[:0]
	if cap(q.Body) == 0 || cap(q.Body) > retainBody {
		q.Body = make([]byte, 0, 16<<10)
	}
	if cap(q.ReadNs) == 0 || cap(q.ReadNs) > retainReads || cap(q.ReadEnd) > retainReads {
		q.ReadNs, q.ReadEnd = make([]int64, 0, 256), make([]uint32, 0, 256)
	}
}
