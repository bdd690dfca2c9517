package tokenizer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bytes from the Hub are outside bytes: these tests are Hub answers that must not hurt.

// cachedFiles lists what a model's cache folder holds (blobs, snapshots, refs).
func cachedFiles(t *testing.T, cache, id string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(cache, repoFolder(id))
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// HF_TOKEN goes to the Hub's own host only: the redirect of a large file to its CDN gets
// no Authorization, whether the CDN is another port of the same address (the rule of Go's
// client compares host names without ports) or a subdomain of the Hub's (which Go's client
// trusts with the header).
func TestHubTokenOnlyToHubHost(t *testing.T) {
	for _, c := range []struct {
		name      string
		subdomain bool
	}{{"other port", false}, {"subdomain", true}} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHub(t)
			o := h.opts(t.TempDir(), nil)
			o.Token = "secret"
			if c.subdomain {
				// hub.test and cdn.hub.test resolve to the two loopback servers.
				addr := map[string]string{"hub.test:80": h.hub.Listener.Addr().String(), "cdn.hub.test:80": h.cdn.Listener.Addr().String()}
				var d net.Dialer
				o.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
					if to, ok := addr[a]; ok {
						a = to
					}
					return d.DialContext(ctx, network, a)
				}}}
				o.Endpoint = "http://hub.test"
				h.cdnBase = "http://cdn.hub.test"
			}
			if _, err := LoadWithOptions("Org/Gated", o); err != nil {
				t.Fatal(err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.authOnCDN) == 0 {
				t.Fatal("the CDN was never asked")
			}
			for _, a := range h.authOnCDN {
				if a != "" {
					t.Errorf("the CDN got Authorization %q", a)
				}
			}
			for _, a := range h.authOnHead {
				if a != "Bearer secret" {
					t.Errorf("the Hub got Authorization %q", a)
				}
			}
		})
	}
}

// A download over the cap is refused before its bytes are read: when the Hub announces its
// size (X-Linked-Size), when the CDN's Content-Length gives it, and when neither does (or
// they lie), by a read cut at the cap. Nothing is cached; the error names the size and the
// cap.
func TestHubDownloadSizeCap(t *testing.T) {
	const limit = 64 << 10
	block := func(w http.ResponseWriter, r *http.Request) {
		select { // never send a byte of the body: only a client that reads waits here
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
	for _, c := range []struct {
		name       string
		linkedSize string
		serve      func(w http.ResponseWriter, r *http.Request, data []byte)
		want       string
		noGet      bool
	}{
		{"announced by the Hub", fmt.Sprint(10 * limit), nil, "is 655360 bytes, over the 65536-byte cap", true},
		{"Content-Length over", "", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Content-Length", fmt.Sprint(10*limit))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			block(w, r)
		}, "is 655360 bytes, over the 65536-byte cap", false},
		{"endless without a length", "", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			piece := []byte(strings.Repeat("x", 4096))
			for r.Context().Err() == nil {
				if _, err := w.Write(piece); err != nil {
					return
				}
			}
		}, "more than the 65536-byte cap", false},
		{"more than announced", "100", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			piece := []byte(strings.Repeat("x", 4096))
			for range 100 {
				if _, err := w.Write(piece); err != nil {
					return
				}
			}
		}, "more than the 100 bytes announced", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHub(t)
			h.linkedSize = map[string]string{commitA: c.linkedSize}
			h.cdnServe = c.serve
			cache := t.TempDir()
			o := h.opts(cache, nil)
			o.MaxDownloadBytes = limit
			_, err := LoadWithOptions("Org/Model", o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if left := cachedFiles(t, cache, "Org/Model"); len(left) > 0 {
				t.Errorf("cached: %v", left)
			}
			h.mu.Lock()
			gets := h.cdnGets
			h.mu.Unlock()
			if c.noGet && gets != 0 {
				t.Errorf("%d GETs of a file announced over the cap", gets)
			}
		})
	}
	// The default cap is documented and applies without the option.
	if got := (&LoadOptions{}).maxDownload(); got != DefaultMaxDownloadBytes {
		t.Errorf("default cap %d", got)
	}
}

// Bytes that do not parse as a tokenizer are never cached, whether or not the Hub gave a
// hash they match (a 64-hex X-Linked-Etag, a git blob ETag, or an ETag that is no hash);
// the next load asks the Hub again instead of failing on the cached bytes. A 64-hex ETag in
// capitals still verifies.
func TestHubNeverCachesUnparseable(t *testing.T) {
	junk := []byte("<html>this is a login page, not a tokenizer</html>")
	a, _ := hubTokenizers(t)
	for _, c := range []struct {
		name  string
		data  []byte
		etag  func(b []byte) string
		want  string
		works bool
	}{
		{"sha256 ETag", junk, sha256Hex, "do not parse as a tokenizer.json", false},
		{"ETag that is no hash", junk, func([]byte) string { return "xyz-1" }, "do not parse as a tokenizer.json", false},
		{"valid JSON, not a tokenizer", []byte(`{"hello": "world"}`), sha256Hex, "do not parse as a tokenizer.json", false},
		{"capital sha256 ETag", a, func(b []byte) string { return strings.ToUpper(sha256Hex(b)) }, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHub(t)
			h.files[commitA]["tokenizer.json"] = c.data
			h.linkedEtag = map[string]string{commitA: c.etag(c.data)}
			cache := t.TempDir()
			_, err := LoadWithOptions("Org/Model", h.opts(cache, nil))
			if c.works {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if left := cachedFiles(t, cache, "Org/Model"); len(left) > 0 {
				t.Errorf("cached: %v", left)
			}
			// Served right now, the same cache loads it: nothing bad was kept in the way.
			h.files[commitA]["tokenizer.json"] = a
			h.linkedEtag = nil
			if tok, err := LoadWithOptions("Org/Model", h.opts(cache, nil)); err != nil || xID(t, tok) != 300 {
				t.Fatalf("second load: %v", err)
			}
		})
	}
	// A tokenizer_config.json that is not JSON is not kept either; the tokenizer still is.
	h := newFakeHub(t)
	h.files[commitA]["tokenizer_config.json"] = []byte("{not json")
	cache := t.TempDir()
	var progress strings.Builder
	if _, err := LoadWithOptions("Org/Model", h.opts(cache, &progress)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "tokenizer_config.json not kept") {
		t.Errorf("progress %q", progress.String())
	}
	for _, f := range cachedFiles(t, cache, "Org/Model") {
		if strings.Contains(f, "tokenizer_config.json") || strings.HasSuffix(f, gitBlobHex([]byte("{not json"))) {
			t.Errorf("cached: %s", f)
		}
	}
}
