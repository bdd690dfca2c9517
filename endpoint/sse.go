package endpoint

import (
	"bytes"
	"mime"
	"strings"
)

// Event is one dispatched Server-Sent Event.
type Event struct {
	// Name is the event type from "event:" lines; empty means the default type "message".
	Name []byte
	// Data is the data lines joined with "\n" (the trailing newline removed).
	Data []byte
	// ReadIndex is the read (the readIndex passed to Feed) in which the event completed,
	// i.e. its dispatching blank line arrived: when the client could first act on it.
	ReadIndex int
	// FirstReadIndex is the read holding the first byte of the event's first field line.
	FirstReadIndex int
}

// SSEScanner frames a text/event-stream incrementally, following the WHATWG HTML
// specification's event-stream interpretation: lines end in "\n", "\r\n" or "\r" (also when
// the pair is split across reads); "data:" values (one leading space removed) are joined with
// "\n"; "event:" sets the type; lines starting with ":" are comments; "id" and "retry" and
// unknown fields are ignored; a blank line dispatches the event unless it has no data. A
// leading UTF-8 byte order mark is skipped.
//
// Feed it each read with its index, then call Next until it returns false. In steady state it
// allocates nothing: its buffers are reused, so an Event's slices are valid only until the
// next call to Feed, Next, Flush or Reset. The zero value is ready to use.
type SSEScanner struct {
	buf  []byte // bytes fed but not yet consumed as complete lines
	pos  int    // start of the unconsumed part of buf
	segs []seg  // read index of each fed chunk still (partly) in buf, by offset

	data      []byte // data buffer of the event being built ("\n" after each data line)
	name      []byte // event type buffer
	dataOut   []byte // the dispatched event's data and name, swapped with data and name so
	nameOut   []byte // building the next event never overwrites the one handed out
	ref       bool   // the pending event has one data line, still in buf at refStart:refEnd:
	refStart  int    // zero copy for the common single-line event; copied into data when a
	refEnd    int    // second data line comes or Feed compacts buf
	inEvent   bool   // a field line of the pending event has been seen
	firstRead int    // read index of the pending event's first field line
	skipLF    bool   // the previous line ended in '\r': a '\n' starting the next read belongs to it
	sawCR     bool   // a '\r' was fed: lines must be checked for CR endings (rare, so tracked)
	started   bool   // past the BOM check
	lastRead  int    // index of the latest read fed
	ev        Event  // the event being handed out
}

type seg struct{ off, read int }

// Feed adds the bytes of one read. p is copied; the caller may reuse it.
func (s *SSEScanner) Feed(p []byte, readIndex int) {
	if s.pos > 0 {
		s.unref() // its bytes are about to be dropped
		// Drop consumed bytes so buf stays as small as the longest pending line.
		n := copy(s.buf, s.buf[s.pos:])
		s.buf = s.buf[:n]
		if n == 0 {
			s.segs = s.segs[:0]
		} else {
			k := 0
			for i, g := range s.segs {
				g.off -= s.pos
				if g.off <= 0 {
					// Starts before the kept bytes: only the last such segment matters.
					if i+1 < len(s.segs) && s.segs[i+1].off-s.pos <= 0 {
						continue
					}
					g.off = 0
				}
				s.segs[k] = g
				k++
			}
			s.segs = s.segs[:k]
		}
		s.pos = 0
	}
	if len(p) == 0 {
		return
	}
	if !s.sawCR && bytes.IndexByte(p, '\r') >= 0 {
		s.sawCR = true
	}
	s.segs = append(s.segs, seg{off: len(s.buf), read: readIndex})
	s.buf = append(s.buf, p...)
	s.lastRead = readIndex
}

// readAt returns the read index of the byte at offset off of buf.
func (s *SSEScanner) readAt(off int) int {
	r := s.lastRead
	for i := len(s.segs) - 1; i >= 0; i-- {
		if s.segs[i].off <= off {
			return s.segs[i].read
		}
	}
	if len(s.segs) > 0 {
		r = s.segs[0].read
	}
	return r
}

// Next returns the next complete event, or false when the bytes fed so far hold none.
func (s *SSEScanner) Next() (Event, bool) {
	for {
		line, lineStart, ok := s.nextLine(false)
		if !ok {
			return Event{}, false
		}
		if s.processLine(line, lineStart) {
			return s.ev, true
		}
	}
}

// Flush is called at end of stream. The specification discards an event not closed by a
// blank line; servers that end the body right after the last data line (no "\n\n") are
// common enough that Flush dispatches it instead. It returns each remaining event in turn
// (call until false); the scanner is then empty.
func (s *SSEScanner) Flush() (Event, bool) {
	if ev, ok := s.Next(); ok {
		return ev, true
	}
	if line, lineStart, ok := s.nextLine(true); ok {
		if s.processLine(line, lineStart) {
			return s.ev, true
		}
	}
	if s.inEvent && s.dispatch(s.lastRead) {
		return s.ev, true
	}
	return Event{}, false
}

// Reset empties the scanner for a new stream, keeping its buffers.
func (s *SSEScanner) Reset() {
	*s = SSEScanner{buf: s.buf[:0], segs: s.segs[:0], data: s.data[:0], name: s.name[:0],
		nameOut: s.nameOut[:0], dataOut: s.dataOut[:0]}
}

// nextLine returns the next complete line (without its terminator) and its offset in buf.
// At EOF (atEOF) a final unterminated line is returned too.
func (s *SSEScanner) nextLine(atEOF bool) (line []byte, start int, ok bool) {
	if !s.started {
		rest := s.buf[s.pos:]
		switch {
		case bytes.HasPrefix(rest, bom):
			s.pos += len(bom)
			s.started = true
		case len(rest) < len(bom) && bytes.HasPrefix(bom, rest) && !atEOF:
			return nil, 0, false // could still be a BOM
		default:
			s.started = true
		}
	}
	if s.skipLF && s.pos < len(s.buf) {
		if s.buf[s.pos] == '\n' {
			s.pos++
		}
		s.skipLF = false
	}
	rest := s.buf[s.pos:]
	if len(rest) == 0 {
		return nil, 0, false
	}
	i := bytes.IndexByte(rest, '\n')
	scan := rest
	if i >= 0 {
		scan = rest[:i]
	}
	if j := s.crIndex(scan); j >= 0 {
		start = s.pos
		line = rest[:j]
		s.pos += j + 1
		if j+1 < len(rest) {
			if rest[j+1] == '\n' {
				s.pos++
			}
		} else {
			s.skipLF = true
		}
		return line, start, true
	}
	if i < 0 {
		if atEOF {
			start = s.pos
			s.pos = len(s.buf)
			return rest, start, true
		}
		return nil, 0, false
	}
	start = s.pos
	s.pos += i + 1
	return rest[:i], start, true
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// crIndex finds a '\r' in a line, skipping the search for streams that never sent one.
func (s *SSEScanner) crIndex(line []byte) int {
	if !s.sawCR {
		return -1
	}
	return bytes.IndexByte(line, '\r')
}

// processLine applies one line; it reports whether the line dispatched an event (left in s.ev).
func (s *SSEScanner) processLine(line []byte, lineStart int) bool {
	if len(line) == 0 {
		if !s.inEvent {
			return false
		}
		return s.dispatch(s.readAt(lineStart))
	}
	if line[0] == ':' {
		return false // comment (keep-alive)
	}
	if len(line) >= 5 && string(line[:5]) == "data:" {
		// The common line, without the general field split.
		value := line[5:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		s.addData(value, lineStart, lineStart+len(line)-len(value))
		return false
	}
	field, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		s.addData(value, lineStart, lineStart+len(line)-len(value))
	case "event":
		s.begin(lineStart)
		s.name = append(s.name[:0], value...)
	default:
		// id, retry and unknown fields: ignored, but they still belong to the event.
		s.begin(lineStart)
	}
	return false
}

// addData appends one data line's value, found at offset off of buf (lines handed to
// processLine always lie in buf; the line starts at lineStart).
func (s *SSEScanner) addData(value []byte, lineStart, off int) {
	s.begin(lineStart)
	if !s.ref && len(s.data) == 0 {
		s.ref, s.refStart, s.refEnd = true, off, off+len(value)
		return
	}
	s.unref()
	s.data = append(s.data, value...)
	s.data = append(s.data, '\n')
}

// unref copies a single data line still referenced in buf into the data buffer.
func (s *SSEScanner) unref() {
	if s.ref {
		s.data = append(s.data, s.buf[s.refStart:s.refEnd]...)
		s.data = append(s.data, '\n')
		s.ref = false
	}
}

func (s *SSEScanner) begin(lineStart int) {
	if !s.inEvent {
		s.inEvent = true
		s.firstRead = s.readAt(lineStart)
	}
}

// dispatch emits the pending event into s.ev (or drops it when it has no data, per the spec)
// and clears the buffers. The event is stored rather than returned through the call chain:
// copying the 64-byte Event at each level was a measurable share of framing time.
func (s *SSEScanner) dispatch(read int) bool {
	s.nameOut, s.name = s.name, s.nameOut[:0]
	s.inEvent = false
	if s.ref {
		// One data line, still in buf: hand it out without copying.
		s.ref = false
		s.ev = Event{Name: s.nameOut, Data: s.buf[s.refStart:s.refEnd], ReadIndex: read, FirstReadIndex: s.firstRead}
		return true
	}
	s.dataOut, s.data = s.data, s.dataOut[:0]
	if len(s.dataOut) == 0 {
		return false
	}
	s.ev = Event{Name: s.nameOut, Data: s.dataOut[:len(s.dataOut)-1], ReadIndex: read, FirstReadIndex: s.firstRead}
	return true
}

// BodyFormat is what a response body holds.
type BodyFormat uint8

// Body formats DetectFormat reports.
const (
	FormatUnknown BodyFormat = iota
	FormatJSON
	FormatSSE
)

func (f BodyFormat) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatSSE:
		return "sse"
	}
	return "unknown"
}

// DetectFormat tells an event stream from a JSON body: by Content-Type when it says
// text/event-stream or a JSON type, else by sniffing the first bytes (a field name such as
// "data:" or a comment means SSE; '{' or '[' means JSON). Servers that answer errors with
// JSON on a streaming request, or stream with a wrong Content-Type, are caught this way.
func DetectFormat(contentType string, head []byte) BodyFormat {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err == nil {
			switch {
			case mt == "text/event-stream":
				return FormatSSE
			case mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-ndjson":
				return FormatJSON
			}
		}
	}
	head = bytes.TrimPrefix(head, bom)
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return FormatUnknown
	}
	switch head[0] {
	case '{', '[':
		return FormatJSON
	case ':':
		return FormatSSE
	}
	for _, f := range [...]string{"data:", "event:", "id:", "retry:", "data\n", "data\r"} {
		if bytes.HasPrefix(head, []byte(f)) || len(head) < len(f) && bytes.HasPrefix([]byte(f), head) {
			return FormatSSE
		}
	}
	return FormatUnknown
}
