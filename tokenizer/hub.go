package tokenizer

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Downloads from the HuggingFace Hub, in the layout huggingface_hub itself writes, so the
// files are shared with Python tools and found again offline:
//
//	<hub>/models--ORG--NAME/blobs/<etag>                      the file's bytes
//	<hub>/models--ORG--NAME/snapshots/<commit>/<file>         a link to ../../blobs/<etag>
//	<hub>/models--ORG--NAME/refs/<revision>                   the commit, for a branch or tag
//
// The protocol is the Hub's resolve endpoint: HEAD <endpoint>/<id>/resolve/<revision>/<file>,
// following only redirects within the Hub (a renamed repository), answers the commit
// (X-Repo-Commit) and the file's identity: X-Linked-Etag, the SHA-256 of a large (LFS) file,
// whose answer is a redirect to a CDN, or else ETag, the git blob hash. A GET of the same
// URL, following every redirect (with the token for the Hub's own host only), gives the
// bytes, which are kept only when they match that identity and parse as the file they are.

// DefaultEndpoint is the HuggingFace Hub.
const DefaultEndpoint = "https://huggingface.co"

// DefaultMaxDownloadBytes caps a file downloaded from the Hub (LoadOptions.MaxDownloadBytes):
// tokenizer.json files are tens of MB at most.
const DefaultMaxDownloadBytes = 256 << 20

// maxDownload is the cap on one downloaded file.
func (o *LoadOptions) maxDownload() int64 {
	if o.MaxDownloadBytes > 0 {
		return o.MaxDownloadBytes
	}
	return DefaultMaxDownloadBytes
}

// hubFile is what a HEAD of one file answered.
type hubFile struct {
	url    string
	commit string
	etag   string
	size   int64
}

// hubError is an answer from the Hub that is not the file.
type hubError struct {
	status int
	code   string // X-Error-Code: RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo…
	msg    string // X-Error-Message
}

func (e *hubError) Error() string {
	var what string
	switch {
	case e.status == http.StatusUnauthorized || e.status == http.StatusForbidden:
		what = "the Hub refused access (a gated or private model, or no such model: set HF_TOKEN to a token that may read it)"
		if e.code == "GatedRepo" {
			what = "the model is gated: accept its terms on the Hub and set HF_TOKEN"
		}
	case e.code == "RevisionNotFound":
		what = "no such revision on the Hub"
	case e.code == "EntryNotFound":
		what = "the model has no such file on the Hub"
	case e.status == http.StatusNotFound:
		what = "no such model on the Hub"
	default:
		what = "the Hub answered an error"
	}
	s := fmt.Sprintf("%s (HTTP %d", what, e.status)
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s + ")"
}

// downloadFromHub fetches tokenizer.json (and tokenizer_config.json, when the model has one)
// of model id at rev into the cache and returns the tokenizer.json snapshot path, or "" when
// the Hub's tokenizer.json is the builtin one (nothing is downloaded then).
func downloadFromHub(hub, id, rev string, opts *LoadOptions) (string, error) {
	endpoint := strings.TrimRight(opts.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	repo := filepath.Join(hub, repoFolder(id))
	f, err := headHubFile(client, endpoint, id, rev, "tokenizer.json", opts.Token)
	if err != nil {
		return "", fmt.Errorf("tokenizer.json at revision %s from %s: %w%s", rev, endpoint, err, hint)
	}
	if f.etag == builtinSHA256 {
		notef(opts.Progress, "tokenizer: %s's tokenizer.json is the builtin Qwen3 tokenizer (SHA-256 %.12s…): using it, nothing downloaded", id, builtinSHA256)
		return "", nil
	}
	path, err := fetchHubFile(client, repo, id, rev, "tokenizer.json", f, opts)
	if err != nil {
		return "", fmt.Errorf("tokenizer.json at revision %s from %s: %w%s", rev, endpoint, err, hint)
	}
	// tokenizer_config.json is kept for tools that read it (chat template, special tokens);
	// encoding needs only tokenizer.json, so its absence or failure is only a notice.
	if c, err := headHubFile(client, endpoint, id, f.commit, "tokenizer_config.json", opts.Token); err == nil {
		if _, err := fetchHubFile(client, repo, id, f.commit, "tokenizer_config.json", c, opts); err != nil {
			notef(opts.Progress, "tokenizer: %s: tokenizer_config.json not kept: %v", id, err)
		}
	} else if he, ok := err.(*hubError); !ok || he.code != "EntryNotFound" && he.status != http.StatusNotFound {
		notef(opts.Progress, "tokenizer: %s: tokenizer_config.json not kept: %v", id, err)
	}
	if rev != f.commit {
		if err := writeRef(repo, rev, f.commit); err != nil {
			return "", err
		}
	}
	return path, nil
}

// resolveURL is the Hub's address of one file of a model at a revision.
func resolveURL(endpoint, id, rev, file string) string {
	return endpoint + "/" + id + "/resolve/" + url.PathEscape(rev) + "/" + file
}

// newHubRequest makes a request to the Hub with the token, if any.
func newHubRequest(method, u, token string) (*http.Request, error) {
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "llmbench-tokenizer")
	req.Header.Set("Accept-Encoding", "identity") // the ETag is that of the bytes as stored
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// headHubFile asks the Hub for a file's commit and identity, following redirects that stay
// on the Hub's host and stopping at the first that leaves it (the CDN of a large file).
func headHubFile(client *http.Client, endpoint, id, rev, file, token string) (*hubFile, error) {
	u := resolveURL(endpoint, id, rev, file)
	req, err := newHubRequest(http.MethodHead, u, token)
	if err != nil {
		return nil, err
	}
	c := *client
	inner := client.CheckRedirect
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if r.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		if inner != nil {
			return inner(r, via)
		}
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, networkError(endpoint, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, &hubError{status: resp.StatusCode, code: resp.Header.Get("X-Error-Code"), msg: resp.Header.Get("X-Error-Message")}
	}
	f := &hubFile{url: u, commit: resp.Header.Get("X-Repo-Commit"), etag: normalizeETag(resp.Header.Get("X-Linked-Etag"))}
	if f.etag == "" {
		f.etag = normalizeETag(resp.Header.Get("ETag"))
	}
	f.size, _ = strconv.ParseInt(resp.Header.Get("X-Linked-Size"), 10, 64)
	if f.size <= 0 && resp.StatusCode/100 == 2 {
		f.size = resp.ContentLength // a redirect's length is that of its own body
	}
	if f.commit == "" || f.etag == "" {
		return nil, fmt.Errorf("%s answered HTTP %d without X-Repo-Commit and ETag: not a HuggingFace Hub (HF_ENDPOINT)", u, resp.StatusCode)
	}
	if !safeName(f.commit) || !safeName(f.etag) {
		return nil, fmt.Errorf("%s answered a commit %q or ETag %q that cannot name a file", u, f.commit, f.etag)
	}
	return f, nil
}

// fetchHubFile downloads f into the cache, unless its snapshot is there already, and
// returns the snapshot path.
func fetchHubFile(client *http.Client, repo, id, rev, file string, f *hubFile, opts *LoadOptions) (string, error) {
	snap := filepath.Join(repo, "snapshots", f.commit, file)
	if _, err := os.Stat(snap); err == nil {
		return snap, nil
	}
	blob := filepath.Join(repo, "blobs", f.etag)
	if _, err := os.Stat(blob); err != nil {
		size := "size unknown"
		if f.size > 0 {
			size = fmt.Sprintf("%.1f MB", float64(f.size)/1e6)
		}
		notef(opts.Progress, "tokenizer: downloading %s of %s (revision %s, commit %.12s, %s) into %s", file, id, rev, f.commit, size, repo)
		check := checkJSON
		if file == "tokenizer.json" {
			check = checkTokenizerJSON
		}
		if err := downloadBlob(client, f, blob, file, opts.Token, opts.maxDownload(), check); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
		return "", fmt.Errorf("tokenizer: %w", err)
	}
	rel, _ := filepath.Rel(filepath.Dir(snap), blob)
	if err := os.Symlink(rel, snap); err != nil {
		// Where links cannot be made, the snapshot holds a copy, as huggingface_hub does.
		data, rerr := os.ReadFile(blob)
		if rerr != nil {
			return "", fmt.Errorf("tokenizer: %w", rerr)
		}
		if err := writeAtomic(snap, data); err != nil {
			return "", err
		}
	}
	return snap, nil
}

// downloadBlob GETs f into blob: refused before a byte is read when the Hub (or the
// response's Content-Length) announces more than limit bytes, and read no further than the
// size announced or the limit otherwise. Redirects are all followed, but the token goes to
// the Hub's own host only (a CDN holding a large file gets none). The bytes are checked
// against the identity the Hub gave (a 64-hex-digit etag is their SHA-256, a 40-digit one
// their git blob hash) and by check (they must parse as the file they claim to be) before
// anything is written to the cache.
func downloadBlob(client *http.Client, f *hubFile, blob, file, token string, limit int64, check func([]byte) error) error {
	if f.size > limit {
		return fmt.Errorf("%s: %s is %d bytes, over the %d-byte cap on a Hub download; nothing downloaded", f.url, file, f.size, limit)
	}
	req, err := newHubRequest(http.MethodGet, f.url, token)
	if err != nil {
		return err
	}
	resp, err := tokenToHubOnly(client, req.URL).Do(req)
	if err != nil {
		return networkError(f.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &hubError{status: resp.StatusCode, code: resp.Header.Get("X-Error-Code"), msg: resp.Header.Get("X-Error-Message")}
	}
	if resp.ContentLength > limit {
		return fmt.Errorf("%s: %s is %d bytes, over the %d-byte cap on a Hub download; nothing downloaded", f.url, file, resp.ContentLength, limit)
	}
	// The most bytes to read: what the Hub announced, else what the response says, else
	// the cap; one more shows a server that sends more than that.
	want, what := limit, fmt.Sprintf("the %d-byte cap on a Hub download", limit)
	switch {
	case f.size > 0:
		want, what = f.size, fmt.Sprintf("the %d bytes announced", f.size)
	case resp.ContentLength >= 0:
		want, what = resp.ContentLength, fmt.Sprintf("the %d bytes announced", resp.ContentLength)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, want+1))
	if err != nil {
		return networkError(f.url, err)
	}
	if int64(len(data)) > want {
		return fmt.Errorf("%s: %s is more than %s; nothing kept", f.url, file, what)
	}
	if resp.ContentLength >= 0 && int64(len(data)) != resp.ContentLength {
		return fmt.Errorf("%s: %d bytes received of %d", f.url, len(data), resp.ContentLength)
	}
	var got string
	switch len(f.etag) {
	case 64:
		h := sha256.Sum256(data)
		got = hex.EncodeToString(h[:])
	case 40:
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(data))
		h.Write(data)
		got = hex.EncodeToString(h.Sum(nil))
	}
	if got != "" && !strings.EqualFold(got, f.etag) {
		return fmt.Errorf("%s: the bytes received hash to %s, not the %s the Hub announced", f.url, got, f.etag)
	}
	if err := check(data); err != nil {
		return fmt.Errorf("%s: the %d bytes received do not parse as a %s (%v); nothing kept", f.url, len(data), file, err)
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return writeAtomic(blob, data)
}

// checkTokenizerJSON is the check of a downloaded tokenizer.json: it must parse.
func checkTokenizerJSON(b []byte) error {
	_, err := Parse(b)
	return err
}

// checkJSON is the check of another downloaded file (tokenizer_config.json): it must be JSON.
func checkJSON(b []byte) error {
	if !json.Valid(b) {
		return errors.New("not JSON")
	}
	return nil
}

// tokenToHubOnly returns client with a redirect policy that sends the Authorization header
// to hub's own scheme and host (with its port) only. Go's client forwards it to the same
// host name on any port and to any subdomain (huggingface.co's CDN, cdn-lfs.huggingface.co,
// is one); a CDN's signed URL needs no token, and a token is a secret.
func tokenToHubOnly(client *http.Client, hub *url.URL) *http.Client {
	c := *client
	inner := client.CheckRedirect
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if !strings.EqualFold(r.URL.Host, hub.Host) || r.URL.Scheme != hub.Scheme {
			r.Header.Del("Authorization")
		}
		if inner != nil {
			return inner(r, via)
		}
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		return nil
	}
	return &c
}

// writeRef records that revision rev is commit, as refs/<rev>.
func writeRef(repo, rev, commit string) error {
	p := filepath.Join(repo, "refs", filepath.FromSlash(rev))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return writeAtomic(p, []byte(commit))
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return nil
}

// normalizeETag strips the weak marker and the quotes of an ETag.
func normalizeETag(e string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
}

// safeName reports whether s can be a file name in the cache.
func safeName(s string) bool {
	return s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !strings.ContainsRune(s, 0)
}

// networkError says the Hub could not be reached.
func networkError(where string, err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer from %s in time (offline? set HF_HUB_OFFLINE=1 to use only the cache): %w", where, err)
	}
	return fmt.Errorf("could not reach %s (offline? set HF_HUB_OFFLINE=1 to use only the cache): %w", where, err)
}
