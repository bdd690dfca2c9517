package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/tokenizer"
)

const tokenizeUsage = `usage: plan tokenize [--tokenizer X] [--count] [--jsonl] < TEXT

Reads UTF-8 text on stdin and prints its token ids as one JSON array, or with --count
the number of tokens. With --jsonl every input line is a JSON object with a "text" field
and every output line holds that text's ids (or count). No special tokens are added
unless --add-special-tokens is given.

flags:
`

// runTokenize is `plan tokenize`: encode stdin under a tokenizer.
func runTokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("plan tokenize", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	spec := fs.String("tokenizer", "builtin", `"builtin" (Qwen3), a tokenizer.json path or folder, or a HuggingFace model id in the local cache ($HF_HOME/hub)`)
	count := fs.Bool("count", false, "print the number of tokens instead of the ids")
	jsonl := fs.Bool("jsonl", false, `read one JSON object with a "text" field per line, print one result per line`)
	special := fs.Bool("add-special-tokens", false, "add what the tokenizer's post-processor adds (Llama 3's BOS; nothing for Qwen)")
	help := fs.BoolP("help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		return fail(stderr, 2, fmt.Errorf("tokenize: %w (see plan tokenize --help)", err))
	}
	if *help {
		fmt.Fprintf(stdout, "%s%s", tokenizeUsage, fs.FlagUsages())
		return 0
	}
	if fs.NArg() > 0 {
		return fail(stderr, 2, fmt.Errorf("tokenize: unexpected argument %q (the text is read from stdin)", fs.Arg(0)))
	}
	tok, err := tokenizer.LoadWithOptions(*spec, tokenizer.EnvLoadOptions(os.Getenv))
	if err != nil {
		return fail(stderr, 2, fmt.Errorf("tokenize: --tokenizer: %w", err))
	}
	tz := &tokenizeRun{tok: tok, count: *count, special: *special}
	w := bufio.NewWriterSize(stdout, 1<<16)
	if *jsonl {
		err = tz.lines(stdin, w)
	} else {
		err = tz.whole(stdin, w)
	}
	if err == nil {
		err = w.Flush()
	}
	var bad *badInput
	switch {
	case errors.As(err, &bad):
		return fail(stderr, 2, fmt.Errorf("tokenize: %w", err))
	case err != nil:
		return fail(stderr, 1, fmt.Errorf("tokenize: %w", err))
	}
	return 0
}

// badInput marks an error in what the user fed in (exit 2) rather than in I/O (exit 1).
type badInput struct{ msg string }

func (e *badInput) Error() string { return e.msg }

type tokenizeRun struct {
	tok     *tokenizer.Tokenizer
	count   bool
	special bool
	ids     []int
	out     []byte
}

// whole encodes all of stdin as one text.
func (tz *tokenizeRun) whole(stdin io.Reader, w *bufio.Writer) error {
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if !utf8.Valid(data) {
		return &badInput{fmt.Sprintf("stdin: invalid UTF-8 at byte %d", invalidAt(data))}
	}
	return tz.emit(w, string(data))
}

// lines encodes the "text" of each JSON line.
func (tz *tokenizeRun) lines(stdin io.Reader, w *bufio.Writer) error {
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
			return &badInput{fmt.Sprintf(`stdin line %d: empty; want a JSON object with a "text" field`, n)}
		}
		var obj struct {
			Text *string `json:"text"`
		}
		if jerr := json.Unmarshal(line, &obj); jerr != nil {
			return &badInput{fmt.Sprintf("stdin line %d: %v", n, jerr)}
		}
		if obj.Text == nil {
			return &badInput{fmt.Sprintf(`stdin line %d: no "text" field`, n)}
		}
		if eerr := tz.emit(w, *obj.Text); eerr != nil {
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
func (tz *tokenizeRun) emit(w *bufio.Writer, text string) error {
	if tz.special {
		tz.ids = append(tz.ids[:0], tz.tok.EncodeWithSpecialTokens(text)...)
	} else {
		tz.ids = tz.tok.AppendEncode(tz.ids[:0], text)
	}
	out := tz.out[:0]
	if tz.count {
		out = strconv.AppendInt(out, int64(len(tz.ids)), 10)
	} else {
		out = append(out, '[')
		for i, id := range tz.ids {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendInt(out, int64(id), 10)
		}
		out = append(out, ']')
	}
	out = append(out, '\n')
	tz.out = out
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
