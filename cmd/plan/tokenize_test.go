package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runTokenizeCmd(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runTokenize(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"ids", "Hello world", nil, "[9707,1879]\n"},
		{"count", "Hello world", []string{"--count"}, "2\n"},
		{"trailing newline is text", "Hello world\n", nil, "[9707,1879,198]\n"},
		{"empty", "", nil, "[]\n"},
		{"empty count", "", []string{"--count"}, "0\n"},
		{"special tokens in text", "<|im_start|>user\nhi<|im_end|>", nil, "[151644,872,198,6023,151645]\n"},
		{"qwen adds none", "Hello world", []string{"--add-special-tokens"}, "[9707,1879]\n"},
		{"explicit builtin", "Hello world", []string{"--tokenizer", "builtin"}, "[9707,1879]\n"},
		{"jsonl", "{\"text\":\"Hello world\"}\n{\"text\":\"\",\"id\":7}\r\n{\"text\":\"Hello\"}", []string{"--jsonl"}, "[9707,1879]\n[]\n[9707]\n"},
		{"jsonl count", "{\"text\":\"Hello world\"}\n{\"text\":\"a\\nb\"}\n", []string{"--jsonl", "--count"}, "2\n3\n"},
		{"jsonl empty input", "", []string{"--jsonl"}, ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := runTokenizeCmd(tt.stdin, tt.args...)
		if code != 0 || stdout != tt.want || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", tt.name, code, stdout, stderr, tt.want)
		}
	}
}

func TestTokenizeLongJSONLLine(t *testing.T) {
	text := strings.Repeat(" word", 50000) // 250 KB, beyond the line reader's buffer; one token per " word"
	code, stdout, stderr := runTokenizeCmd(`{"text":"`+text+`"}`+"\n", "--jsonl", "--count")
	if code != 0 || stdout != "50000\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestTokenizeErrors(t *testing.T) {
	tests := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"invalid utf-8", "ok\xff", nil, "invalid UTF-8 at byte 2"},
		{"unknown flag", "", []string{"--bogus"}, "unknown flag: --bogus"},
		{"argument", "", []string{"hello"}, `unexpected argument "hello"`},
		{"bad tokenizer", "", []string{"--tokenizer", "/nonexistent/tokenizer.json"}, "--tokenizer"},
		{"bad json", "{\"text\":\"a\"}\n{oops\n", []string{"--jsonl"}, "stdin line 2"},
		{"no text", "{\"prompt\":\"a\"}\n", []string{"--jsonl"}, `stdin line 1: no "text" field`},
		{"text not string", "{\"text\":5}\n", []string{"--jsonl"}, "stdin line 1"},
		{"blank line", "{\"text\":\"a\"}\n\n{\"text\":\"b\"}\n", []string{"--jsonl"}, "stdin line 2: empty"},
	}
	for _, tt := range tests {
		code, _, stderr := runTokenizeCmd(tt.stdin, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "plan: tokenize: ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line saying %q", tt.name, code, stderr, tt.want)
		}
	}
}

// TestTokenizeModelFromCache resolves a model id through $HF_HOME's hub layout.
func TestTokenizeModelFromCache(t *testing.T) {
	home := t.TempDir()
	snap := filepath.Join(home, "hub", "models--acme--tiny", "snapshots", "0123abc")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	// A two-byte vocabulary with one merge: "hi" is one token, id 2.
	doc := `{"model": {"type": "BPE", "vocab": {"h": 0, "i": 1, "hi": 2}, "merges": ["h i"]},
		"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}, "decoder": {"type": "ByteLevel"}}`
	if err := os.WriteFile(filepath.Join(snap, "tokenizer.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	code, stdout, stderr := runTokenizeCmd("hi", "--tokenizer", "acme/tiny")
	if code != 0 || stdout != "[2]\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runTokenizeCmd("hi", "--tokenizer", snap)
	if code != 0 || stdout != "[2]\n" {
		t.Errorf("folder path: exit %d, stdout %q", code, stdout)
	}
}

func TestTokenizeHelp(t *testing.T) {
	code, stdout, _ := runTokenizeCmd("", "--help")
	if code != 0 || !strings.Contains(stdout, "--jsonl") || !strings.Contains(stdout, "--count") {
		t.Errorf("exit %d, help %q", code, stdout)
	}
}
