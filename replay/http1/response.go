package http1

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// This file parses HTTP/1.1 responses incrementally, from whatever pieces the socket returns,
// without allocating: the worker feeds every read to it and timestamps the read before.

// readBufSize is the per-runner socket read buffer; a response head must fit in it.
const readBufSize = 32 << 10

// minDirectRead is the least room a read straight into a response's body buffer gets
// (Parser.space): with less, the buffer grows (up to the body limit), and at the limit
// reads go to the read buffer again.
const minDirectRead = 2 << 10

// framing says how a response body ends.
type framing uint8

const (
	frameNone    framing = iota // no body (204, 304)
	frameLength                 // Content-Length bytes
	frameChunked                // chunked transfer coding
	frameClose                  // everything until the server closes the connection
)

// chunk decoder states.
const (
	csSize     uint8 = iota // hex digits of a chunk size
	csExt                   // chunk extension, up to the end of the line
	csSizeLF                // '\n' ending the size line
	csData                  // chunk data
	csDataCR                // '\r' after chunk data
	csDataLF                // '\n' after chunk data
	csTrailer               // start of a trailer line (or the final empty line)
	csTrailerL              // inside a trailer line
	csFinalLF               // '\n' of the final empty line
	csDone
)

// maxChunkSize rejects absurd chunk sizes before they overflow.
const maxChunkSize = 1 << 40

// maxChunkLine bounds a chunk size line, its extensions included (net/http's limit), and
// maxTrailerBytes the trailer section: framing that never ends is a broken response, not
// one to wait on until the request times out.
const (
	maxChunkLine    = 4096
	maxTrailerBytes = readBufSize
)

// errHeaderTooLarge is returned when the response head does not fit the read buffer.
var errHeaderTooLarge = errors.New("response headers exceed the 32 KiB read buffer")

// respHead is the part of a response head the client acts on.
type respHead struct {
	status    int
	framing   framing
	length    int64 // Content-Length when framing is frameLength
	keepAlive bool  // the connection may carry another request after this response
}

// parseHead parses a status line and headers (without the final empty line's CRLF pair
// being required in b: b ends where the empty line began). It allocates nothing.
func parseHead(b []byte, h *respHead) error {
	*h = respHead{}
	line, rest := cutLine(b)
	// Status line: HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
		(line[7] != '0' && line[7] != '1') || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("malformed status line %q", clip(line))
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return fmt.Errorf("malformed status code in %q", clip(line))
		}
		h.status = h.status*10 + int(c-'0')
	}
	if h.status < 100 {
		return fmt.Errorf("status code %d out of range", h.status)
	}
	http11 := line[7] == '1'
	h.keepAlive = http11
	chunked, hasTE, hasLength := false, false, false
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		if len(line) == 0 {
			continue
		}
		colon := indexByte(line, ':')
		if colon <= 0 {
			return fmt.Errorf("malformed header line %q", clip(line))
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			n, ok := parseDecimal(value)
			if !ok {
				return fmt.Errorf("bad Content-Length %q", clip(value))
			}
			if hasLength && n != h.length {
				return fmt.Errorf("conflicting Content-Length headers %d and %d", h.length, n)
			}
			h.length, hasLength = n, true
		case equalFold(name, "transfer-encoding"):
			hasTE = true
			// The last coding decides; "chunked" must be last when present (RFC 9112 6.1).
			chunked = hasSuffixFold(trimOWS(value), "chunked")
		case equalFold(name, "connection"):
			if containsTokenFold(value, "close") {
				h.keepAlive = false
			} else if containsTokenFold(value, "keep-alive") {
				h.keepAlive = true
			}
		}
	}
	switch {
	case h.status == 204 || h.status == 304:
		h.framing = frameNone
	case hasTE && chunked:
		h.framing = frameChunked
	case hasTE:
		h.framing = frameClose
		h.keepAlive = false
	case hasLength:
		h.framing = frameLength
	default:
		h.framing = frameClose
		h.keepAlive = false
	}
	return nil
}

// bodyDecoder removes the transfer coding from a response body fed to it piece by piece.
type bodyDecoder struct {
	framing   framing
	remaining int64 // bytes left of the body (frameLength) or of the current chunk
	state     uint8
	digits    int  // hex digits seen in the current size line
	lineBytes int  // bytes of the current size line, or of the trailer section
	excess    bool // bytes arrived after the end of the body
	limit     int  // most body bytes kept
	over      bool // the body outgrew limit: what fits was kept, the rest dropped
	grewBig   bool // put grew the body's buffer past bigGrowth (the caller releases the old one)
}

// reset prepares d for a body framed as h says, keeping at most limit bytes of it.
func (d *bodyDecoder) reset(h *respHead, limit int) {
	*d = bodyDecoder{framing: h.framing, remaining: h.length, limit: limit}
	if h.framing == frameChunked {
		d.remaining = 0
	}
}

// put appends p to dst, the body so far, up to d.limit bytes; past it, it keeps what fits and
// sets d.over. The body's buffer grows to the limit at most, never beyond, so a response
// that never ends costs no more memory than the limit. p may lie in dst's spare capacity, at
// or after its end (a read straight into the body: Parser.space): then nothing is
// copied when p starts at the end, and the bytes move left over the chunk framing otherwise.
func (d *bodyDecoder) put(dst, p []byte) []byte {
	if room := d.limit - len(dst); len(p) > room {
		p = p[:max(room, 0)]
		d.over = true
	}
	if len(p) > 0 && len(dst) < cap(dst) && &dst[:len(dst)+1][len(dst)] == &p[0] {
		return dst[:len(dst)+len(p)] // in place already
	}
	if need := len(dst) + len(p); need > cap(dst) {
		n := min(max(2*cap(dst), need), d.limit)
		grown := make([]byte, len(dst), n)
		copy(grown, dst)
		dst = grown
		d.grewBig = d.grewBig || n > bigGrowth
	}
	return append(dst, p...)
}

// bigGrowth is the size past which a response buffer that grew has the copy it grew from
// handed back to the kernel at once (releaseGarbage): a response that outgrows every usual
// size then costs about what it holds, not that plus every smaller copy the doubling left
// behind, which the worker's lax GC target (400) would keep resident for long. Responses
// that large are rare; the collection costs a millisecond or so.
const bigGrowth = 1 << 20

// releaseGarbage collects the heap and returns what is free to the kernel; called once a
// grown buffer past bigGrowth replaced its old copy in the request record.
func releaseGarbage() { debug.FreeOSMemory() }

// done reports whether the body is complete (a close-delimited body completes only at EOF).
func (d *bodyDecoder) done() bool {
	switch d.framing {
	case frameNone:
		return true
	case frameLength:
		return d.remaining == 0
	case frameChunked:
		return d.state == csDone
	}
	return false
}

// feed decodes p and appends the body bytes to dst, up to d.limit (see put). Bytes after the
// end of the body are dropped and set d.excess (the connection is then not reused).
func (d *bodyDecoder) feed(dst, p []byte) ([]byte, error) {
	switch d.framing {
	case frameNone:
		if len(p) > 0 {
			d.excess = true
		}
		return dst, nil
	case frameLength:
		n := int64(len(p))
		if n > d.remaining {
			n = d.remaining
			d.excess = true
		}
		d.remaining -= n
		return d.put(dst, p[:n]), nil
	case frameClose:
		return d.put(dst, p), nil
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch d.state {
		case csSize, csExt, csSizeLF:
			if d.lineBytes++; d.lineBytes > maxChunkLine {
				return dst, fmt.Errorf("chunk size line longer than %d bytes", maxChunkLine)
			}
		case csTrailer, csTrailerL, csFinalLF:
			if d.lineBytes++; d.lineBytes > maxTrailerBytes {
				return dst, fmt.Errorf("chunked trailers exceed %d KiB", maxTrailerBytes>>10)
			}
		}
		switch d.state {
		case csSize:
			v := unhex(c)
			switch {
			case v >= 0:
				if d.remaining > maxChunkSize {
					return dst, errors.New("chunk size too large")
				}
				d.remaining = d.remaining<<4 | int64(v)
				d.digits++
			case d.digits == 0:
				return dst, fmt.Errorf("bad chunk size byte %q", c)
			case c == ';' || c == ' ' || c == '\t':
				d.state = csExt
			case c == '\r':
				d.state = csSizeLF
			case c == '\n':
				d.endSizeLine()
			default:
				return dst, fmt.Errorf("bad chunk size byte %q", c)
			}
			i++
		case csExt:
			if c == '\r' {
				d.state = csSizeLF
			} else if c == '\n' {
				d.endSizeLine()
			}
			i++
		case csSizeLF:
			if c != '\n' {
				return dst, fmt.Errorf("bad chunk size line ending %q", c)
			}
			d.endSizeLine()
			i++
		case csData:
			n := int64(len(p) - i)
			if n > d.remaining {
				n = d.remaining
			}
			dst = d.put(dst, p[i:i+int(n)])
			d.remaining -= n
			i += int(n)
			if d.remaining == 0 {
				d.state = csDataCR
			}
		case csDataCR:
			switch c {
			case '\r':
				d.state = csDataLF
			case '\n':
				d.state = csSize
			default:
				return dst, fmt.Errorf("chunk data not followed by CRLF (found %q)", c)
			}
			i++
		case csDataLF:
			if c != '\n' {
				return dst, fmt.Errorf("chunk data not followed by CRLF (found %q)", c)
			}
			d.state = csSize
			i++
		case csTrailer:
			switch c {
			case '\r':
				d.state = csFinalLF
			case '\n':
				d.state = csDone
			default:
				d.state = csTrailerL
			}
			i++
		case csTrailerL:
			if c == '\n' {
				d.state = csTrailer
			}
			i++
		case csFinalLF:
			if c != '\n' {
				return dst, fmt.Errorf("bad end of chunked body %q", c)
			}
			d.state = csDone
			i++
		case csDone:
			d.excess = true
			return dst, nil
		}
	}
	return dst, nil
}

// endSizeLine starts the chunk whose size line just ended, or the trailer after the last.
func (d *bodyDecoder) endSizeLine() {
	d.digits, d.lineBytes = 0, 0
	if d.remaining == 0 {
		d.state = csTrailer
	} else {
		d.state = csData
	}
}

// findHeadEnd returns the index of the "\r\n\r\n" (or "\n\n") ending the head in b, searching
// from from, and the length of that terminator; -1 when the head is not complete yet.
func findHeadEnd(b []byte, from int) (int, int) {
	if from < 0 {
		from = 0
	}
	for i := from; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '\n' {
			return i, 2
		}
		if i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n' {
			if i > 0 && b[i-1] == '\r' {
				return i - 1, 4
			}
			return i, 3
		}
	}
	return -1, 0
}

func cutLine(b []byte) (line, rest []byte) {
	i := indexByte(b, '\n')
	if i < 0 {
		line, rest = b, nil
	} else {
		line, rest = b[:i], b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold compares b with the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

func hasSuffixFold(b []byte, s string) bool {
	return len(b) >= len(s) && equalFold(b[len(b)-len(s):], s)
}

// containsTokenFold reports whether the comma-separated list b holds the token s.
func containsTokenFold(b []byte, s string) bool {
	for len(b) > 0 {
		i := indexByte(b, ',')
		var tok []byte
		if i < 0 {
			tok, b = b, nil
		} else {
			tok, b = b[:i], b[i+1:]
		}
		if equalFold(trimOWS(tok), s) {
			return true
		}
	}
	return false
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// clip shortens b for an error message.
func clip(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
