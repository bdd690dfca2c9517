package jsonwire

import (
	"encoding/json"
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
	var got2 []byte
	s := NewScanner(doc)
	s.EnterObject()
	n := 0
	if _, ok := s.Member(&n); ok {
		got2, _ = s.Str(got2)
	}
	if s.err == nil {
		s.Member(&n)
		s.End()
	}
	if (s.err == nil) != wantOK {
		t.Fatalf("%q: scanner err = %v, encoding/json ok = %v", raw, s.err, wantOK)
	}
	if wantOK && string(got2) != want {
		t.Fatalf("%q: scanner got %q, want %q", raw, got2, want)
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

func TestScannerSyntax(t *testing.T) {
	bad := []string{`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `[1,]`, `[1 2]`, `{"a":tru}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":1}x`,
		`{"a":"unterminated}`, `{1:2}`, `{"\u12":1}`, strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)}
	for _, b := range bad {
		s := NewScanner([]byte(b))
		s.Skip()
		s.End()
		if s.err == nil {
			t.Errorf("%q: accepted", b)
		}
		if json.Valid([]byte(b)) {
			t.Errorf("%q: test case is valid JSON", b)
		}
	}
	good := []string{`{}`, `[]`, ` {"a" : [ 1 , -2.5e+3 , true , false , null , "x" , {} ] } `, `"s"`, `0`, `{"a\"b":1}`}
	for _, g := range good {
		s := NewScanner([]byte(g))
		s.Skip()
		s.End()
		if s.err != nil {
			t.Errorf("%q: rejected: %v", g, s.err.Msg)
		}
	}
}

func TestScannerInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"12.9", 12, true}, {"1e3", 1000, true}, {"null", 0, false}, {`"5"`, 0, false}, {"1234567890123456789", 1234567890123456789, true}} {
		s := NewScanner([]byte(tc.in))
		v, ok := s.Int()
		if ok != tc.ok || ok && v != tc.want {
			t.Errorf("int(%s) = %d, %v", tc.in, v, ok)
		}
	}
}
