package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzEncodeStreamJSONL: `plan tokenize --jsonl` (EncodeStream, JSONL) over any input either fails as bad input (never
// another error, never a panic) or prints one line per input line whose ids decode back to
// that line's text, and in --count mode the number of those ids.
func FuzzEncodeStreamJSONL(f *testing.F) {
	tok, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"{\"text\":\"Hello world\"}\n{\"text\":\"\",\"id\":7}\r\n{\"text\":\"Hello\"}",
		"{\"text\":\"a\\nb\\u00e9\"}\n",
		"{\"text\":\"<|im_start|>user\\nhi<|im_end|>\"}",
		"{\"text\":null}\n",
		"{\"text\":\"x\"} trailing\n",
		"\n",
		"{\"text\":\"\\ud800\"}",
		"[1,2]",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var ids, counts bytes.Buffer
		errIDs := tokenizeLines(tok, false, in, &ids)
		errCount := tokenizeLines(tok, true, in, &counts)
		var bad *InputError
		if (errIDs == nil) != (errCount == nil) {
			t.Fatalf("ids mode %v, count mode %v", errIDs, errCount)
		}
		if errIDs != nil {
			if !errors.As(errIDs, &bad) || !strings.HasPrefix(bad.Msg, "stdin line ") || strings.Contains(bad.Msg, "\n") {
				t.Fatalf("error %v is not a one-line bad input naming its line", errIDs)
			}
			return
		}
		texts := inputTexts(t, in)
		idLines, countLines := splitLines(ids.String()), splitLines(counts.String())
		if len(idLines) != len(texts) || len(countLines) != len(texts) {
			t.Fatalf("%d input lines gave %d id lines, %d count lines", len(texts), len(idLines), len(countLines))
		}
		for i, text := range texts {
			var got []int
			if err := json.Unmarshal([]byte(idLines[i]), &got); err != nil {
				t.Fatalf("line %d: %q is not a JSON array of ids: %v", i+1, idLines[i], err)
			}
			if n, err := strconv.Atoi(countLines[i]); err != nil || n != len(got) {
				t.Fatalf("line %d: count %q, %d ids", i+1, countLines[i], len(got))
			}
			if dec := tok.Decode(got); dec != text {
				t.Fatalf("line %d: ids decode to %q; want %q", i+1, dec, text)
			}
		}
	})
}

func tokenizeLines(tok *Tokenizer, count bool, in []byte, out *bytes.Buffer) error {
	return tok.EncodeStream(bytes.NewReader(in), out, StreamOptions{Count: count, JSONL: true})
}

// inputTexts is the "text" of each line of an input the command accepted, decoded the way
// encoding/json does (invalid UTF-8 and lone surrogates as U+FFFD).
func inputTexts(t *testing.T, in []byte) []string {
	t.Helper()
	var texts []string
	ls := splitLines(string(in))
	// A last line without its "\n" that is empty once its "\r" is cut is the end of input.
	if n := len(ls); n > 0 && !bytes.HasSuffix(in, []byte("\n")) && strings.TrimSuffix(ls[n-1], "\r") == "" {
		ls = ls[:n-1]
	}
	for _, l := range ls {
		var obj struct{ Text string }
		if err := json.Unmarshal([]byte(strings.TrimSuffix(l, "\r")), &obj); err != nil {
			t.Fatalf("accepted line %q does not decode: %v", l, err)
		}
		texts = append(texts, obj.Text)
	}
	return texts
}

// splitLines splits s at "\n", without a last empty line after a final "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
