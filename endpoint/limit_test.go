package endpoint

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLimitField(t *testing.T) {
	for _, c := range []struct {
		body  string
		field string
		n     int
	}{
		{`{"model":"m","messages":[],"max_completion_tokens":64,"stream":true}`, "max_completion_tokens", 64},
		{`{"max_tokens":5,"max_completion_tokens":9}`, "max_tokens", 5},
		{`{"input":"x","max_output_tokens":7}`, "max_output_tokens", 7},
		{`{"inputs":"x","parameters":{"details":true,"max_new_tokens":12}}`, "parameters.max_new_tokens", 12},
		{`{"parameters":{"max_new_tokens":3},"max_tokens":4}`, "max_tokens", 4},
		{`{"messages":[{"max_tokens":3}]}`, "", 0}, // not at the top level
		{`{"max_tokens":"5"}`, "", 0},
		{`[1]`, "", 0},
		{`{"max_tokens":`, "", 0},
		{``, "", 0},
	} {
		f, n, ok := LimitField([]byte(c.body))
		if f != c.field || n != c.n || ok != (c.field != "") {
			t.Errorf("LimitField(%s) = %q %d %v, want %q %d", c.body, f, n, ok, c.field, c.n)
		}
	}
}

func TestSetLimit(t *testing.T) {
	for _, c := range []struct {
		body, field string
		want        string
	}{
		// The same field: the value changes in place, nothing else.
		{`{"model":"m","max_completion_tokens":64,"stream":true}`, "max_completion_tokens",
			`{"model":"m","max_completion_tokens":2,"stream":true}`},
		// Another field: the old one goes, the new one takes its place.
		{`{"model":"m","max_completion_tokens":64,"stream":true}`, "max_tokens",
			`{"model":"m","max_tokens":2,"stream":true}`},
		// Both present: exactly one remains.
		{`{"max_tokens":9, "a" : [1, {"b":2}],"max_completion_tokens":64}`, "max_completion_tokens",
			`{"max_completion_tokens":2,"a":[1, {"b":2}]}`},
		// None present: it comes first.
		{`{"model":"m","stream":false}`, "max_tokens", `{"max_tokens":2,"model":"m","stream":false}`},
		{`{}`, "max_tokens", `{"max_tokens":2}`},
		// TGI: inside parameters, created when missing.
		{`{"inputs":"x","parameters":{"details":true,"max_new_tokens":64}}`, "parameters.max_new_tokens",
			`{"inputs":"x","parameters":{"max_new_tokens":2,"details":true}}`},
		{`{"inputs":"x"}`, "parameters.max_new_tokens", `{"inputs":"x","parameters":{"max_new_tokens":2}}`},
		// Escaped text survives byte for byte.
		{`{"m":"a\"b\u00e9","max_tokens":1}`, "max_tokens", `{"m":"a\"b\u00e9","max_tokens":2}`},
		// The members bound to the limit are lowered to it (vLLM refuses min_tokens > max_tokens),
		// whichever the API: chat, completions, responses, TGI.
		{`{"model":"m","max_completion_tokens":128,"min_tokens":128,"ignore_eos":true}`, "max_completion_tokens",
			`{"model":"m","max_completion_tokens":2,"min_tokens":2,"ignore_eos":true}`},
		{`{"prompt":"x","min_tokens":128}`, "max_tokens", `{"max_tokens":2,"prompt":"x","min_tokens":2}`},
		{`{"input":"x","max_output_tokens":50,"min_output_tokens":50.0,"min_new_tokens":7}`, "max_output_tokens",
			`{"input":"x","max_output_tokens":2,"min_output_tokens":2,"min_new_tokens":2}`},
		{`{"inputs":"x","parameters":{"max_new_tokens":64,"min_new_tokens":64,"min_tokens":9}}`, "parameters.max_new_tokens",
			`{"inputs":"x","parameters":{"max_new_tokens":2,"min_new_tokens":2,"min_tokens":2}}`},
		// Below the limit, not numbers, or not at a bound place: left as they are.
		{`{"min_tokens":1,"max_tokens":9}`, "max_tokens", `{"min_tokens":1,"max_tokens":2}`},
		{`{"min_tokens":"128","max_tokens":9}`, "max_tokens", `{"min_tokens":"128","max_tokens":2}`},
		{`{"max_tokens":9,"extra":{"min_tokens":128}}`, "max_tokens", `{"max_tokens":2,"extra":{"min_tokens":128}}`},
	} {
		got, err := SetLimit([]byte("prefix"), []byte(c.body), c.field, 2)
		if err != nil {
			t.Errorf("SetLimit(%s, %s): %v", c.body, c.field, err)
			continue
		}
		if string(got) != "prefix"+c.want {
			t.Errorf("SetLimit(%s, %s)\n got %s\nwant %s", c.body, c.field, got[6:], c.want)
		}
		if f, n, ok := LimitField(got[6:]); !ok || f != c.field || n != 2 {
			t.Errorf("SetLimit(%s, %s) reads back as %q %d", c.body, c.field, f, n)
		}
	}
	for _, bad := range []string{``, `[]`, `{"a":`, `{"a":1}x`, `"s"`} {
		if got, err := SetLimit([]byte("p"), []byte(bad), "max_tokens", 2); err == nil || string(got) != "p" {
			t.Errorf("SetLimit(%q) = %q, %v; want an error and dst unchanged", bad, got, err)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	long := strings.Repeat("é", 300)
	for _, c := range []struct{ body, want string }{
		// llama.cpp's /metrics without --metrics.
		{`{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with ` + "`--metrics`" + `","type":"not_supported_error"}}`,
			"This server does not support metrics endpoint. Start it with `--metrics`"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, "The model does not exist."},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"detail":[{"loc":["body","model"],"msg":"field required","type":"missing"}]}`, "field required"},
		{`{"error":{"message":"line one\nline two"}}`, "line one"},
		{`{"error":{"code":500}}`, `{"error":{"code":500}}`},
		{"<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>", "502 Bad Gateway"},
		{"<HTML><BODY><H1>Service Unavailable</H1></BODY></HTML>", "Service Unavailable"},
		{"\n\n  upstream connect error or disconnect/reset before headers\nmore", "upstream connect error or disconnect/reset before headers"},
		{"tab\there\x00nul", "tab here nul"},
		{"", ""},
		{"   \n ", ""},
		{long, strings.Repeat("é", (MaxErrorMessage-len("…"))/2) + "…"},
		{"\xff\xfebad", "\uFFFDbad"},
	} {
		got := ErrorMessage([]byte(c.body))
		if got != c.want {
			t.Errorf("ErrorMessage(%.60q) = %q, want %q", c.body, got, c.want)
		}
	}
}

// FuzzErrorMessage: any server bytes give one valid UTF-8 line within the bound, no panic.
func FuzzErrorMessage(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"detail":[[{"msg":"x"}]]}`))
	f.Add([]byte(`<title>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := ErrorMessage(b)
		if len(m) > MaxErrorMessage || strings.ContainsAny(m, "\n\r") || !utf8.ValidString(m) {
			t.Fatalf("ErrorMessage(%q) = %q", b, m)
		}
	})
}

// FuzzSetLimit: for any body SetLimit accepts, the result is a JSON object that reads back
// with exactly the limit set and the same other members.
func FuzzSetLimit(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint8(0))
	}
	f.Add([]byte(`{"parameters":{"max_new_tokens":1},"max_tokens":2}`), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		field := LimitFields[int(which)%len(LimitFields)]
		LimitField(b)
		out, err := SetLimit(nil, b, field, 2)
		if err != nil {
			return
		}
		var got, orig map[string]any
		// Numbers as written: a member too large for a float64 (1e400) is still JSON.
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if dec.Decode(&got) != nil || !json.Valid(out) {
			t.Fatalf("SetLimit(%q) = %q: not JSON", b, out)
		}
		if f, n, ok := LimitField(out); !ok || f != field || n != 2 {
			t.Fatalf("SetLimit(%q, %s) = %q reads back as %q %d", b, field, out, f, n)
		}
		if json.Unmarshal(b, &orig) != nil {
			return // accepted by the scanner only (duplicate-free JSON is all encoding/json checks more)
		}
		for k := range orig {
			if k == "max_completion_tokens" || k == "max_tokens" || k == "max_output_tokens" || k == "parameters" {
				continue
			}
			if _, ok := got[k]; !ok {
				t.Fatalf("SetLimit(%q) lost member %q: %q", b, k, out)
			}
		}
	})
}
