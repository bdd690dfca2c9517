package mockllm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeTokenizer is a small byte-level tokenizer with the pre-tokenizer
// shape of Qwen's (letters with one leading non-letter, digits, runs of
// punctuation, whitespace): whole pieces found in the vocabulary are one
// token, anything else one token per byte. It lets these tests run
// without the builtin tokenizer and makes counts easy to reason about.
type fakeTokenizer struct {
	vocab []string
	ids   map[string]int
}

var fakePreTok = regexp.MustCompile(`[^\r\n\pL\pN]?\pL+|\pN| ?[^\s\pL\pN]+[\r\n]*|\s*[\r\n]+|\s+`)

func newFakeTokenizer() *fakeTokenizer {
	t := &fakeTokenizer{ids: map[string]int{}}
	add := func(s string) {
		if _, ok := t.ids[s]; !ok {
			t.ids[s] = len(t.vocab)
			t.vocab = append(t.vocab, s)
		}
	}
	for b := range 256 {
		add(string([]byte{byte(b)}))
	}
	cons, vows := "bdfgklmnprstvz", "aeiou"
	for _, c1 := range cons {
		for _, v1 := range vows {
			for _, c2 := range cons[:6] {
				w := string([]rune{c1, v1, c2})
				add(w)
				add(" " + w)
			}
		}
	}
	// Some words exist only with a space, some only bare: the vocabulary
	// builder must skip them.
	add(" onlyspaced")
	add("onlybare")
	for _, p := range []string{`{"`, `":`, ` "`, `"}`, `_`, "query", "get", "_weather", "hello", " world"} {
		add(p)
	}
	return t
}

var fakeTok = newFakeTokenizer()

func (t *fakeTokenizer) Encode(s string) []int {
	var out []int
	for _, p := range fakePreTok.FindAllString(s, -1) {
		if id, ok := t.ids[p]; ok {
			out = append(out, id)
			continue
		}
		for i := 0; i < len(p); i++ {
			out = append(out, int(p[i]))
		}
	}
	return out
}

func (t *fakeTokenizer) Count(s string) int { return len(t.Encode(s)) }

func (t *fakeTokenizer) Decode(ids []int) string {
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(t.vocab[id])
	}
	return sb.String()
}

func (t *fakeTokenizer) VocabSize() int { return len(t.vocab) }

// testOptions are fast options for tests: no delays unless a test sets them.
func testOptions() Options {
	o := DefaultOptions()
	o.Tokenizer = fakeTok
	o.TTFT, o.ITL = 0, 0
	o.NaturalTokens = 20
	return o
}

// startServer starts a server on loopback and stops it with the test.
func startServer(t testing.TB, o Options) string {
	t.Helper()
	url, stop, err := Start("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url
}

// sseEvent is one parsed SSE event with its arrival time.
type sseEv struct {
	name string
	data string
	at   time.Time
}

// readSSE parses an SSE body into events, stamping each with the time
// its last line was read. It returns the read error that ended the
// body (nil at a clean EOF).
func readSSE(r io.Reader) ([]sseEv, error) {
	br := bufio.NewReader(r)
	var evs []sseEv
	var cur sseEv
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data != nil || cur.name != "" {
				cur.data = strings.Join(data, "\n")
				cur.at = time.Now()
				evs = append(evs, cur)
			}
			cur, data = sseEv{}, nil
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[5:], " "))
		}
	}
}

// post sends a JSON body and returns the response.
func post(t testing.TB, url string, body any, hdr ...string) *http.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// jsonOf decodes s into a generic map, failing the test on bad JSON.
func jsonOf(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	return m
}

// path walks a decoded JSON value by keys and indexes ("choices.0.delta").
func path(v any, p string) any {
	for _, k := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func nan() float64 { return math.NaN() }

func postJSON(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp := post(t, url, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	if strings.HasPrefix(string(b), "[") {
		return jsonOf(t, `{"list":`+string(b)+`}`)
	}
	return jsonOf(t, string(b))
}
