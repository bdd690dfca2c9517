package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// StreamOptions say what EncodeStream reads and prints (`plan tokenize`'s flags).
type StreamOptions struct {
	// Count prints the number of tokens instead of the ids.
	Count bool
	// JSONL reads one JSON object with a "text" field per line and prints one result per line;
	// otherwise the whole input is one text.
	JSONL bool
	// AddSpecialTokens adds what the post-processor adds (Llama 3's BOS; nothing for Qwen).
	AddSpecialTokens bool
}

// InputError is an error in the text fed in (invalid UTF-8, a line that is no JSON object
// with a "text"), as opposed to one in reading or writing it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// EncodeStream encodes the text of r (its stdin) and writes one line per text on w (its
// stdout): the ids as one JSON array, or their count. An error in the input is an
// *InputError naming the byte or the line.
func (t *Tokenizer) EncodeStream(r io.Reader, w io.Writer, o StreamOptions) error {
	s := &stream{tok: t, count: o.Count, special: o.AddSpecialTokens}
	bw := bufio.NewWriterSize(w, 1<<16)
	var err error
	if o.JSONL {
		err = s.lines(r, bw)
	} else {
		err = s.whole(r, bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// stream holds the buffers reused from one text to the next.
type stream struct {
	tok     *Tokenizer
	count   bool
	special bool
	ids     []int
	out     []byte
}

// whole encodes all of stdin as one text.
func (s *stream) whole(stdin io.Reader, w *bufio.Writer) error {
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if !utf8.Valid(data) {
		return &InputError{fmt.Sprintf("stdin: invalid UTF-8 at byte %d", invalidAt(data))}
	}
	return s.emit(w, string(data))
}

// lines encodes the "text" of each JSON line.
func (s *stream) lines(stdin io.Reader, w *bufio.Writer) error {
	r := bufio.NewReaderSize(stdin, 1<<16)
	var line []byte
	for n := 1; ; n++ {
		var err error
		line, err = readLine(r, line[:0])
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return &InputError{fmt.Sprintf(`stdin line %d: empty; want a JSON object with a "text" field`, n)}
		}
		var obj struct {
			Text *string `json:"text"`
		}
		if jerr := json.Unmarshal(line, &obj); jerr != nil {
			return &InputError{fmt.Sprintf("stdin line %d: %v", n, jerr)}
		}
		if obj.Text == nil {
			return &InputError{fmt.Sprintf(`stdin line %d: no "text" field`, n)}
		}
		if eerr := s.emit(w, *obj.Text); eerr != nil {
			return eerr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine appends the next line of r to buf, without its "\n" or "\r\n"; lines may be
// longer than the reader's buffer.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		return buf, err
	}
}

// emit writes one result line: the ids as a JSON array, or their count.
func (s *stream) emit(w *bufio.Writer, text string) error {
	if s.special {
		s.ids = append(s.ids[:0], s.tok.EncodeWithSpecialTokens(text)...)
	} else {
		s.ids = s.tok.AppendEncode(s.ids[:0], text)
	}
	out := s.out[:0]
	if s.count {
		out = strconv.AppendInt(out, int64(len(s.ids)), 10)
	} else {
		out = append(out, '[')
		for i, id := range s.ids {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendInt(out, int64(id), 10)
		}
		out = append(out, ']')
	}
	out = append(out, '\n')
	s.out = out
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

// invalidAt returns the offset of the first byte that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}
