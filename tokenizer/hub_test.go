package tokenizer

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeHub speaks the HuggingFace Hub's resolve protocol on loopback:
// /{org}/{name}/resolve/{revision}/{file}, large files (tokenizer.json) answered with a
// redirect to a separate CDN server and their SHA-256 in X-Linked-Etag, small ones
// (tokenizer_config.json) directly with their git blob hash as ETag; X-Repo-Commit always.
type fakeHub struct {
	hub, cdn *httptest.Server
	// repos: id → revision → commit; files: commit → file → bytes.
	repos map[string]map[string]string
	files map[string]map[string][]byte
	// linkedEtag overrides the X-Linked-Etag of a commit's tokenizer.json.
	linkedEtag map[string]string
	gated      map[string]bool // ids that need "Bearer secret"
	renamed    map[string]string
	corrupt    bool // the CDN serves one byte changed
	// linkedSize overrides the X-Linked-Size of a commit's tokenizer.json ("" omits it);
	// cdnServe, when set, answers the CDN's GETs instead of the file.
	linkedSize map[string]string
	cdnServe   func(w http.ResponseWriter, r *http.Request, data []byte)
	cdnBase    string // where large files redirect to; "" is the CDN server's URL

	mu         sync.Mutex
	heads      int
	gets       int
	cdnGets    int
	authOnHead []string
	authOnCDN  []string
}

const (
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	commitQ = "cccccccccccccccccccccccccccccccccccccccc"
)

func sha256Hex(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func gitBlobHex(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func newFakeHub(t *testing.T) *fakeHub {
	a, b := hubTokenizers(t)
	h := &fakeHub{
		repos: map[string]map[string]string{
			"Org/Model":    {"main": commitA, "v1": commitB},
			"Org/Gated":    {"main": commitA},
			"Org/NoConfig": {"main": commitB},
			"Org/Qwenish":  {"main": commitQ},
		},
		files: map[string]map[string][]byte{
			commitA: {"tokenizer.json": a, "tokenizer_config.json": []byte(`{"model_max_length": 4096}`)},
			commitB: {"tokenizer.json": b},
			commitQ: {"tokenizer.json": []byte("not fetched: the ETag says it is the builtin")},
		},
		linkedEtag: map[string]string{commitQ: builtinSHA256},
		gated:      map[string]bool{"Org/Gated": true},
		renamed:    map[string]string{"Old/Model": "Org/Model"},
	}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	t.Cleanup(func() { h.hub.Close(); h.cdn.Close() })
	return h
}

func (h *fakeHub) counts() (heads, gets int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.heads, h.gets
}

func (h *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if r.Method == http.MethodHead {
		h.heads++
		h.authOnHead = append(h.authOnHead, r.Header.Get("Authorization"))
	} else {
		h.gets++
	}
	h.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	id := parts[0] + "/" + parts[1]
	rev, _ := url.PathUnescape(parts[3])
	file := parts[4]
	fail := func(status int, code string) {
		w.Header().Set("X-Error-Code", code)
		w.Header().Set("X-Error-Message", code+" for "+id)
		w.WriteHeader(status)
	}
	if to, ok := h.renamed[id]; ok {
		http.Redirect(w, r, "/"+to+"/resolve/"+parts[3]+"/"+file, http.StatusTemporaryRedirect) // relative, as the Hub does
		return
	}
	refs, ok := h.repos[id]
	if !ok {
		fail(http.StatusNotFound, "RepoNotFound")
		return
	}
	if h.gated[id] && r.Header.Get("Authorization") != "Bearer secret" {
		fail(http.StatusUnauthorized, "GatedRepo")
		return
	}
	commit, ok := refs[rev]
	if !ok {
		if _, isCommit := h.files[rev]; !isCommit {
			fail(http.StatusNotFound, "RevisionNotFound")
			return
		}
		commit = rev
	}
	data, ok := h.files[commit][file]
	if !ok {
		fail(http.StatusNotFound, "EntryNotFound")
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if file == "tokenizer.json" { // a large file: LFS, served by the CDN
		sum := sha256Hex(data)
		if e, ok := h.linkedEtag[commit]; ok {
			sum = e
		}
		w.Header().Set("ETag", `"`+gitBlobHex([]byte("pointer"))+`"`)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		size := fmt.Sprint(len(data))
		if v, ok := h.linkedSize[commit]; ok {
			size = v
		}
		if size != "" {
			w.Header().Set("X-Linked-Size", size)
		}
		base := h.cdn.URL
		if h.cdnBase != "" {
			base = h.cdnBase
		}
		http.Redirect(w, r, base+"/blobs/"+commit+"/"+file, http.StatusFound)
		return
	}
	w.Header().Set("ETag", `W/"`+gitBlobHex(data)+`"`)
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	if r.Method == http.MethodGet {
		w.Write(data)
	}
}

func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.cdnGets++
	h.authOnCDN = append(h.authOnCDN, r.Header.Get("Authorization"))
	h.mu.Unlock()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/blobs/"), "/")
	data := h.files[parts[0]][parts[1]]
	if h.cdnServe != nil {
		h.cdnServe(w, r, data)
		return
	}
	if h.corrupt {
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 1
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	w.Write(data)
}

func (h *fakeHub) opts(cache string, progress io.Writer) LoadOptions {
	return LoadOptions{HubCache: cache, Endpoint: h.hub.URL, Progress: progress}
}

// A model id is downloaded into the standard cache layout, found there the second time
// without a request, and used offline once the Hub is gone.
func TestHubDownloadThenCachedThenOffline(t *testing.T) {
	h := newFakeHub(t)
	cache := t.TempDir()
	var progress bytes.Buffer
	tok, err := LoadWithOptions("Org/Model", h.opts(cache, &progress))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "Org/Model" || xID(t, tok) != 300 {
		t.Errorf("downloaded tokenizer: name %q, <X> = %d", tok.Name(), xID(t, tok))
	}
	if !strings.Contains(progress.String(), "downloading tokenizer.json of Org/Model (revision main, commit aaaaaaaaaaaa") ||
		!strings.Contains(progress.String(), "downloading tokenizer_config.json") {
		t.Errorf("progress lines: %q", progress.String())
	}
	repo := filepath.Join(cache, "models--Org--Model")
	a, _ := hubTokenizers(t)
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err != nil || string(ref) != commitA {
		t.Errorf("refs/main = %q, %v", ref, err)
	}
	snap := filepath.Join(repo, "snapshots", commitA, "tokenizer.json")
	if link, err := os.Readlink(snap); err != nil || link != filepath.Join("..", "..", "blobs", sha256Hex(a)) {
		t.Errorf("snapshot link %q, %v", link, err)
	}
	if data, err := os.ReadFile(filepath.Join(repo, "blobs", sha256Hex(a))); err != nil || !bytes.Equal(data, a) {
		t.Errorf("blob: %v", err)
	}
	cfg := h.files[commitA]["tokenizer_config.json"]
	if data, err := os.ReadFile(filepath.Join(repo, "snapshots", commitA, "tokenizer_config.json")); err != nil || !bytes.Equal(data, cfg) {
		t.Errorf("tokenizer_config.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repo, "blobs", gitBlobHex(cfg))); err != nil {
		t.Errorf("config blob not named by its git hash: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(repo, "blobs"))
	if len(entries) != 2 {
		t.Errorf("blobs: %v (temporary files left?)", entries)
	}

	heads, gets := h.counts()
	if _, err := LoadWithOptions("Org/Model", h.opts(cache, io.Discard)); err != nil {
		t.Fatal(err)
	}
	if h2, g2 := h.counts(); h2 != heads || g2 != gets {
		t.Errorf("cached model asked the Hub again: %d HEAD %d GET, then %d %d", heads, gets, h2, g2)
	}

	h.hub.Close()
	h.cdn.Close()
	offline := h.opts(cache, nil)
	offline.Offline = true
	if tok, err = LoadWithOptions("Org/Model", offline); err != nil || xID(t, tok) != 300 {
		t.Fatalf("offline from the cache: %v", err)
	}
}

// A revision is downloaded to its own snapshot with refs/<revision>, named in Name so that
// it loads again, offline, from the cache.
func TestHubRevision(t *testing.T) {
	h := newFakeHub(t)
	cache := t.TempDir()
	o := h.opts(cache, nil)
	o.Revision = "v1"
	tok, err := LoadWithOptions("Org/Model", o)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "Org/Model@v1" || xID(t, tok) != 301 {
		t.Errorf("revision v1: name %q, <X> = %d", tok.Name(), xID(t, tok))
	}
	if ref, err := os.ReadFile(filepath.Join(cache, "models--Org--Model", "refs", "v1")); err != nil || string(ref) != commitB {
		t.Errorf("refs/v1 = %q, %v", ref, err)
	}
	offline := LoadOptions{HubCache: cache, Offline: true}
	if tok, err = LoadWithOptions(tok.Name(), offline); err != nil || xID(t, tok) != 301 {
		t.Errorf("Name() offline: %v", err)
	}
	// main is not in the cache: asking for it offline fails rather than taking v1.
	if _, err := LoadWithOptions("Org/Model@main", offline); err == nil || !strings.Contains(err.Error(), "not at revision main") {
		t.Errorf("main offline: %v", err)
	}
	// A commit is a revision too, and conflicting revisions are an error.
	o.Revision = commitA
	if tok, err = LoadWithOptions("Org/Model", o); err != nil || xID(t, tok) != 300 {
		t.Errorf("by commit: %v", err)
	}
	if _, err := LoadWithOptions("Org/Model@v1", o); err == nil || !strings.Contains(err.Error(), "--tokenizer-revision") {
		t.Errorf("conflicting revisions: %v", err)
	}
}

// Failures say what the Hub answered and how to go on without it.
func TestHubErrors(t *testing.T) {
	h := newFakeHub(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name, spec string
		edit       func(*LoadOptions)
		want       string
	}{
		{"gated without a token", "Org/Gated", nil, "the model is gated: accept its terms on the Hub and set HF_TOKEN (HTTP 401"},
		{"no such model", "Org/Missing", nil, "no such model on the Hub (HTTP 404"},
		{"no such revision", "Org/Model", func(o *LoadOptions) { o.Revision = "v9" }, "no such revision on the Hub"},
		{"network failure", "Org/Model", func(o *LoadOptions) { o.Endpoint = closed.URL }, "could not reach " + closed.URL},
		{"offline and not cached", "Org/Model", func(o *LoadOptions) { o.Offline = true }, "may not be asked (offline"},
		{"not a Hub", "Org/Model", func(o *LoadOptions) { o.Endpoint = h.cdn.URL }, "not a HuggingFace Hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := h.opts(t.TempDir(), nil)
			if tt.edit != nil {
				tt.edit(&o)
			}
			_, err := LoadWithOptions(tt.spec, o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{tt.want, `"` + tt.spec + `"`, "--tokenizer builtin", "--tokenizer PATH"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
	// With the token the gated model downloads; the token went along.
	o := h.opts(t.TempDir(), nil)
	o.Token = "secret"
	if _, err := LoadWithOptions("Org/Gated", o); err != nil {
		t.Errorf("gated with a token: %v", err)
	}
	h.mu.Lock()
	last := h.authOnHead[len(h.authOnHead)-1]
	h.mu.Unlock()
	if last != "Bearer secret" {
		t.Errorf("Authorization %q", last)
	}
}

// Bytes that do not match the identity the Hub announced are not kept.
func TestHubCorruptDownload(t *testing.T) {
	h := newFakeHub(t)
	h.corrupt = true
	cache := t.TempDir()
	_, err := LoadWithOptions("Org/Model", h.opts(cache, nil))
	if err == nil || !strings.Contains(err.Error(), "hash to") {
		t.Fatalf("corrupt download: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "models--Org--Model", "*", "*"))
	if len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}
}

// A model without tokenizer_config.json, and a renamed repository (a redirect within the
// Hub), still load.
func TestHubNoConfigAndRenamed(t *testing.T) {
	h := newFakeHub(t)
	var progress bytes.Buffer
	tok, err := LoadWithOptions("Org/NoConfig", h.opts(t.TempDir(), &progress))
	if err != nil || xID(t, tok) != 301 {
		t.Fatalf("no config: %v", err)
	}
	if strings.Contains(progress.String(), "not kept") {
		t.Errorf("a missing tokenizer_config.json was reported: %q", progress.String())
	}
	cache := t.TempDir()
	if tok, err = LoadWithOptions("Old/Model", h.opts(cache, nil)); err != nil || xID(t, tok) != 300 {
		t.Fatalf("renamed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "models--Old--Model", "snapshots", commitA, "tokenizer.json")); err != nil {
		t.Errorf("renamed repository cached under the name asked for: %v", err)
	}
}

// A tokenizer.json whose SHA-256 is the builtin's is not downloaded: the HEAD says so.
func TestHubBuiltinByHash(t *testing.T) {
	h := newFakeHub(t)
	var progress bytes.Buffer
	tok, err := LoadWithOptions("Org/Qwenish", h.opts(t.TempDir(), &progress))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != BuiltinName {
		t.Errorf("name %q", tok.Name())
	}
	if _, gets := h.counts(); gets != 0 {
		t.Errorf("%d GETs for a tokenizer known by its hash", gets)
	}
	if !strings.Contains(progress.String(), "is the builtin Qwen3 tokenizer") {
		t.Errorf("notice %q", progress.String())
	}
}

// The model ids of the table resolve to the builtin with one notice, offline and with an
// empty cache; a model in the cache wins over the table; another revision is not assumed.
func TestBuiltinModelTable(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(qwen3GZ))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256Hex(raw); got != builtinSHA256 {
		t.Fatalf("builtin tokenizer.json SHA-256 %s, constant says %s", got, builtinSHA256)
	}
	cache := t.TempDir()
	for _, id := range append(BuiltinModels(), "qwen/qwen3-8b") {
		var progress bytes.Buffer
		tok, err := LoadWithOptions(id, LoadOptions{HubCache: cache, Offline: true, Progress: &progress})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if tok.Name() != BuiltinName || strings.Count(progress.String(), "\n") != 1 || !strings.Contains(progress.String(), "ships the builtin") {
			t.Errorf("%s: name %q, notice %q", id, tok.Name(), progress.String())
		}
	}
	a, _ := hubTokenizers(t)
	writeFile(t, filepath.Join(cache, "models--Qwen--Qwen3-8B", "snapshots", commitA, "tokenizer.json"), a)
	if tok, err := LoadWithOptions("Qwen/Qwen3-8B", LoadOptions{HubCache: cache, Offline: true}); err != nil || xID(t, tok) != 300 {
		t.Errorf("cached copy did not win: %v", err)
	}
	if _, err := LoadWithOptions("Qwen/Qwen3-1.7B", LoadOptions{HubCache: cache, Offline: true, Revision: "v2"}); err == nil {
		t.Error("the table answered for another revision")
	}
	if IsBuiltinModel("Qwen/Qwen3-8B-Base-Unknown") {
		t.Error("prefix matched")
	}
}

// --tokenizer-trust-remote-code runs nothing, and says so when a file cannot be read.
func TestTrustRemoteCodeExplained(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "tokenizer.json")
	writeFile(t, bad, []byte(`{"model": {"type": "Unigram"}}`))
	_, err := LoadWithOptions(bad, LoadOptions{TrustRemoteCode: true})
	if err == nil || !strings.Contains(err.Error(), "runs no code") || !strings.Contains(err.Error(), "Unigram") {
		t.Errorf("error %v", err)
	}
}
