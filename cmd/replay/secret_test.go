package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// --api-key-file: the key is the file's content without its trailing newline; it wins over
// $OPENAI_API_KEY and cannot be combined with --api-key.
func TestAPIKeyFile(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-env"
		}
		return ""
	}
	base := []string{"replay", "--plan", "p", "-u", "http://a", "--output-dir", "d"}
	for _, c := range []struct {
		content, want string
	}{
		{"sk-file\n", "sk-file"},
		{"sk-file\r\n", "sk-file"},
		{"sk-file", "sk-file"},
		{" sk-spaced \n", " sk-spaced "},
	} {
		o, err := parse(append(base, "--api-key-file", file("key", c.content)), io.Discard, env)
		if err != nil || o.APIKey != c.want {
			t.Errorf("key file %q: key %q, err %v; want %q", c.content, o.APIKey, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--api-key-file", filepath.Join(dir, "absent")}, "--api-key-file: open "},
		{"unreadable file", []string{"--api-key-file", dir}, "--api-key-file: read "},
		{"empty file", []string{"--api-key-file", file("empty", "\n")}, "the file is empty"},
		{"several lines", []string{"--api-key-file", file("two", "sk-leak-1\nsk-leak-2\n")}, "several lines"},
		{"both flags", []string{"--api-key", "sk-leak", "--api-key-file", file("k2", "sk-leak\n")}, "mutually exclusive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(append(base, c.args...), &stderr, env)
			out := stderr.String()
			if code != 2 || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 || strings.Contains(out, "sk-leak") {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q, no key", code, out, c.want)
			}
		})
	}
	var help bytes.Buffer
	parse([]string{"replay", "--help"}, &help, env)
	if !strings.Contains(help.String(), "process list") || !strings.Contains(help.String(), "--api-key-file") {
		t.Errorf("--help does not warn that --api-key is visible in the process list:\n%s", help.String())
	}
}

// A real run with the key in a file, custom credential headers and a token in the URL's
// query: the server gets the key and the headers, run.json holds none of the secrets.
func TestSecretsNotRecorded(t *testing.T) {
	var mu sync.Mutex
	var auth, custom []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		auth, custom = append(auth, r.Header.Get("Authorization")), append(custom, r.Header.Get("X-Custom-Token"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	plan := writePlan(t, 3, 0)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-from-file-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "--plan", plan, "--url", srv.URL+"/?access_token=qs-secret-2", "--output-dir", dir,
		"--workers", "1", "--no-pin", "--no-gpu-telemetry", "--no-server-metrics", "--no-preflight", "--api-key-file", keyFile, // the server counts the run's requests
		"-H", "X-Custom-Token: hdr-secret-3", "--header=x-upstream-auth:hdr-secret-4")
	cmd.Env = append(os.Environ(), "LLMBENCH_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 3 || auth[0] != "Bearer sk-from-file-1" || custom[0] != "hdr-secret-3" {
		t.Fatalf("server saw Authorization %q, custom %q", auth, custom)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sk-from-file-1", "qs-secret-2", "hdr-secret-3", "hdr-secret-4"} {
		if bytes.Contains(raw, []byte(s)) || strings.Contains(stderr.String(), s) {
			t.Errorf("run.json or stderr holds the secret %q:\n%s\n%s", s, raw, stderr.String())
		}
	}
	for _, s := range []string{"X-Custom-Token: REDACTED", "x-upstream-auth: REDACTED", "access_token=REDACTED", keyFile} {
		if !bytes.Contains(raw, []byte(s)) {
			t.Errorf("run.json lacks %q:\n%s", s, raw)
		}
	}
}
