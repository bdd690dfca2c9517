package endpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// stdUnescape decodes a raw JSON string body with encoding/json, the reference.
func stdUnescape(raw []byte) (string, bool) {
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

var stringCases = []string{
	``, `plain`, `caf\u00e9`, `\ud83d\ude00`, `a\nb\tc\rd\be\ff\/g\\h\"i`,
	`\u00`, `\x`, `\`, `\uD83D`, `\uD83Dx`, `\uDE00\uD83D`, `\uD83D\u0041`, `\uD83D\uD83D\uDE00`,
	"raw \xff\xfe bytes", "ok \xe2\x82\xac euro", "trunc \xe2\x82", `\u0000`, `\u2028`, "tab\there",
	"日本語", `\"`, `x\\`, `\\\"`, `\uDBFF\uDFFF`, `\uDC00`,
}

func TestUnescapeMatchesStdlib(t *testing.T) {
	for _, raw := range stringCases {
		checkUnescape(t, []byte(raw))
	}
}

func checkUnescape(t *testing.T, raw []byte) {
	t.Helper()
	want, wantOK := stdUnescape(raw)
	got, gotOK := unescapeString(nil, raw)
	if gotOK != wantOK {
		t.Fatalf("%q: ok = %v, encoding/json ok = %v", raw, gotOK, wantOK)
	}
	if gotOK && string(got) != want {
		t.Fatalf("%q: got %q, encoding/json %q", raw, got, want)
	}
	// The scanner path (strSpan + str) must agree too.
	doc := append(append([]byte(`{"k":"`), raw...), `"}`...)
	var d Delta
	s := scan{b: doc}
	s.enterObject()
	n := 0
	if _, ok := s.member(&n); ok {
		d.Content, _ = s.str(d.Content)
	}
	if s.err == nil {
		s.member(&n)
		s.end()
	}
	if (s.err == nil) != wantOK {
		t.Fatalf("%q: scanner err = %v, encoding/json ok = %v", raw, s.err, wantOK)
	}
	if wantOK && string(d.Content) != want {
		t.Fatalf("%q: scanner got %q, want %q", raw, d.Content, want)
	}
}

// FuzzJSONString checks string unescaping (escapes, surrogate pairs, invalid UTF-8)
// against encoding/json.
func FuzzJSONString(f *testing.F) {
	for _, c := range stringCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkUnescape(t, raw)
	})
}

// FuzzAppendString checks the request-body string escaper against encoding/json with
// HTML escaping off, byte for byte.
func FuzzAppendString(f *testing.F) {
	for _, c := range []string{"", "plain", "q\"b\\", "\x00\x1f\x7f", "<>&", "\u2028\u2029", "\xff", "é😀", strings.Repeat("abcdefgh", 5) + "\n"} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		got := appendString(nil, s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, encoding/json %s", s, got, want)
		}
	})
}

func TestAppendStringLong(t *testing.T) {
	// Every byte value at every alignment of the eight-byte fast path.
	for off := range 9 {
		for c := range 256 {
			s := strings.Repeat("a", off) + string([]byte{byte(c)}) + strings.Repeat("b", 9)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			if got, want := appendString(nil, s), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
				t.Fatalf("off %d byte %#x: got %s want %s", off, c, got, want)
			}
		}
	}
}

func TestAppendValue(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{1e21, `1e+21`},
		{1e-7, `1e-7`},
		{123456789.0, `123456789`},
		{0.1, `0.1`},
		{float32(0.1), `0.1`},
		{math.Copysign(0, -1), `-0`},
		{int64(-5), `-5`},
		{uint(7), `7`},
		{json.Number("1.5e3"), `1.5e3`},
		{json.RawMessage(`{ "a" : 1 }`), `{"a":1}`},
		{[]any{"a<b", true, map[string]any{"z": 1, "y": []any{}}}, `["a<b",true,{"y":[],"z":1}]`},
		{struct {
			A string `json:"a"`
		}{"<&>"}, `{"a":"<&>"}`},
		{map[string]int{"b": 1, "a": 2}, `{"a":2,"b":1}`},
	}
	for _, tc := range cases {
		got, err := appendValue(nil, tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("appendValue(%#v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
	if _, err := appendValue(nil, json.Number("1.")); err == nil {
		t.Error("invalid json.Number accepted")
	}
	cyc := map[string]any{}
	cyc["self"] = cyc
	if _, err := appendValue(nil, cyc); err == nil {
		t.Error("cyclic map accepted")
	}
	for _, f := range []float64{0, 1, -1, 1e-6, 9.999e-7, 1e20, 1e21, 3.14159, 1.0 / 3, -2.5e-300} {
		want, _ := json.Marshal(f)
		got, _ := appendValue(nil, f)
		if string(got) != string(want) {
			t.Errorf("float %v: got %s want %s", f, got, want)
		}
	}
}

func TestScannerSyntax(t *testing.T) {
	bad := []string{`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `[1,]`, `[1 2]`, `{"a":tru}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":1}x`,
		`{"a":"unterminated}`, `{1:2}`, `{"\u12":1}`, strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)}
	for _, b := range bad {
		s := scan{b: []byte(b)}
		s.skip()
		s.end()
		if s.err == nil {
			t.Errorf("%q: accepted", b)
		}
		if json.Valid([]byte(b)) {
			t.Errorf("%q: test case is valid JSON", b)
		}
	}
	good := []string{`{}`, `[]`, ` {"a" : [ 1 , -2.5e+3 , true , false , null , "x" , {} ] } `, `"s"`, `0`, `{"a\"b":1}`}
	for _, g := range good {
		s := scan{b: []byte(g)}
		s.skip()
		s.end()
		if s.err != nil {
			t.Errorf("%q: rejected: %v", g, s.err.msg)
		}
	}
}

func TestScannerInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"12.9", 12, true}, {"1e3", 1000, true}, {"null", 0, false}, {`"5"`, 0, false}, {"1234567890123456789", 1234567890123456789, true}} {
		s := scan{b: []byte(tc.in)}
		v, ok := s.int()
		if ok != tc.ok || ok && v != tc.want {
			t.Errorf("int(%s) = %d, %v", tc.in, v, ok)
		}
	}
}
