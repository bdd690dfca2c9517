package e2e_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// loopbackHub serves one model's tokenizer.json the way the HuggingFace Hub does: a
// resolve URL, X-Repo-Commit, and the file's SHA-256 in X-Linked-Etag (an LFS file).
type loopbackHub struct {
	*httptest.Server
	gets atomic.Int32
}

func newLoopbackHub(t *testing.T, id string, tokenizerJSON []byte) *loopbackHub {
	sum := sha256.Sum256(tokenizerJSON)
	etag := hex.EncodeToString(sum[:])
	const commit = "0123456789abcdef0123456789abcdef01234567"
	h := &loopbackHub{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + id + "/resolve/main/tokenizer.json":
			w.Header().Set("X-Repo-Commit", commit)
			w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
			w.Header().Set("ETag", `"`+etag+`"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(tokenizerJSON)))
			if r.Method == http.MethodGet {
				h.gets.Add(1)
				w.Write(tokenizerJSON)
			}
		default:
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// TestProfileLoopbackHub: a model that is not in the builtin table, with an empty cache,
// gets its tokenizer.json downloaded from the Hub (HF_ENDPOINT on loopback) into the
// standard cache layout; the second run finds it cached (no download), and a third run
// with HF_HUB_OFFLINE=1 and the Hub gone still works from the cache.
func TestProfileLoopbackHub(t *testing.T) {
	// The Qwen3 tokenizer.json with one more byte: the same tokens, another file (SHA-256),
	// so the loader cannot take the builtin shortcut.
	gz, err := os.ReadFile(filepath.Join("..", "tokenizer", "qwen3-tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tokJSON, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	tokJSON = append(tokJSON, '\n')
	const id = "acme/tiny-chat"
	hub := newLoopbackHub(t, id, tokJSON)
	mock := startMock(t, "--ttft", "1ms", "--itl", "0s")
	work, hf := t.TempDir(), t.TempDir()
	run := func(env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin.profile, "--model", id, "--endpoint-type", "chat", "--streaming",
			"--url", strings.TrimPrefix(mock.URL, "http://"), "--synthetic-input-tokens-mean", "64",
			"--output-tokens-mean", "16", "--concurrency", "2", "--request-count", "8", "--ui-type", "none")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), append([]string{"HF_HOME=" + hf, "HF_HUB_CACHE=", "HUGGINGFACE_HUB_CACHE=", "HF_TOKEN="}, env...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("profile (%v): %v\nstdout:\n%s\nstderr:\n%s", env, err, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "Time to First Token (ms)") {
			t.Fatalf("no console table:\n%s", out.String())
		}
		return errb.String()
	}

	stderr := run("HF_ENDPOINT="+hub.URL, "HF_HUB_OFFLINE=")
	if !strings.Contains(stderr, "downloading tokenizer.json of "+id) || hub.gets.Load() != 1 {
		t.Fatalf("first run: %d downloads, stderr:\n%s", hub.gets.Load(), stderr)
	}
	snap := filepath.Join(hf, "hub", "models--acme--tiny-chat", "snapshots", "0123456789abcdef0123456789abcdef01234567", "tokenizer.json")
	if got, err := os.ReadFile(snap); err != nil || !bytes.Equal(got, tokJSON) {
		t.Fatalf("cache snapshot %s: %v (%d bytes, want %d)", snap, err, len(got), len(tokJSON))
	}
	if ref, err := os.ReadFile(filepath.Join(hf, "hub", "models--acme--tiny-chat", "refs", "main")); err != nil || strings.TrimSpace(string(ref)) != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("refs/main: %q %v", ref, err)
	}

	stderr = run("HF_ENDPOINT="+hub.URL, "HF_HUB_OFFLINE=")
	if strings.Contains(stderr, "downloading") || hub.gets.Load() != 1 {
		t.Fatalf("second run downloaded again (%d GETs):\n%s", hub.gets.Load(), stderr)
	}

	hub.Close()
	stderr = run("HF_ENDPOINT="+hub.URL, "HF_HUB_OFFLINE=1")
	if strings.Contains(stderr, "downloading") {
		t.Fatalf("offline run downloaded:\n%s", stderr)
	}
}
