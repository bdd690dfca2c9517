package tokenizer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadOptions say where tokenizers are looked for and whether, and how, the HuggingFace Hub
// may be asked. Packages never read the environment: commands fill this with
// EnvLoadOptions(os.Getenv) and then set what their flags say (Revision, TrustRemoteCode,
// Progress).
type LoadOptions struct {
	// HFHome is the HuggingFace home folder (HF_HOME); models are looked up in its hub
	// subfolder. Empty means ~/.cache/huggingface.
	HFHome string
	// HubCache is the hub cache folder itself (HF_HUB_CACHE); when set it wins over HFHome.
	HubCache string
	// Revision is the branch, tag or commit of a model id (--tokenizer-revision); "" is
	// "main". A spec "org/name@revision" names one too.
	Revision string
	// Offline forbids the network (HF_HUB_OFFLINE=1): a model id must be in the cache, or
	// in the table of models that ship the builtin tokenizer.
	Offline bool
	// Endpoint is the Hub's base URL (HF_ENDPOINT); "" is https://huggingface.co.
	Endpoint string
	// Token is sent as a bearer token to the Hub (HF_TOKEN), for gated and private models.
	Token string
	// TrustRemoteCode is AIPerf's --tokenizer-trust-remote-code, accepted so that command
	// lines carry over. No code is ever run: only tokenizer.json is read, so a model whose
	// tokenizer exists only as Python code cannot be loaded, with or without it.
	TrustRemoteCode bool
	// Progress receives one-line notices: the builtin tokenizer standing in for a model id,
	// and downloads. nil is silent.
	Progress io.Writer
	// HTTPClient makes the Hub requests; nil uses a client with a 2-minute timeout.
	HTTPClient *http.Client
	// MaxDownloadBytes caps one file downloaded from the Hub; 0 is DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
}

// EnvLoadOptions returns the LoadOptions that HuggingFace's own libraries would derive
// from the environment: the cache from HF_HUB_CACHE (or the older HUGGINGFACE_HUB_CACHE),
// else HF_HOME, else $XDG_CACHE_HOME/huggingface; HF_ENDPOINT; HF_TOKEN (or the older
// HUGGING_FACE_HUB_TOKEN); HF_HUB_OFFLINE (1, true, yes or on). Commands pass os.Getenv.
func EnvLoadOptions(getenv func(string) string) LoadOptions {
	o := LoadOptions{HFHome: getenv("HF_HOME"), HubCache: getenv("HF_HUB_CACHE"),
		Endpoint: getenv("HF_ENDPOINT"), Token: getenv("HF_TOKEN")}
	if o.HubCache == "" {
		o.HubCache = getenv("HUGGINGFACE_HUB_CACHE")
	}
	if o.HFHome == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			o.HFHome = filepath.Join(x, "huggingface")
		}
	}
	if o.Token == "" {
		o.Token = getenv("HUGGING_FACE_HUB_TOKEN")
	}
	switch strings.ToLower(strings.TrimSpace(getenv("HF_HUB_OFFLINE"))) {
	case "1", "true", "yes", "on":
		o.Offline = true
	}
	return o
}

// hubDir returns the hub cache folder the options point at.
func (o LoadOptions) hubDir() (string, error) {
	if o.HubCache != "" {
		return o.HubCache, nil
	}
	home := o.HFHome
	if home == "" {
		u, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locating the HuggingFace cache: %w", err)
		}
		home = filepath.Join(u, ".cache", "huggingface")
	}
	return filepath.Join(home, "hub"), nil
}

// Load returns the tokenizer that spec names: "builtin" or BuiltinName (Qwen3, embedded, so
// that a Name() recorded in a plan loads again), a path to a tokenizer.json, a folder
// holding one, or a HuggingFace model id ("Qwen/Qwen3-8B") found in the local cache under
// ~/.cache/huggingface/hub or known to ship the builtin tokenizer. It never uses the
// network; LoadWithOptions can.
func Load(spec string) (*Tokenizer, error) {
	return LoadWithOptions(spec, LoadOptions{Offline: true})
}

// hint is what every failure to resolve a model id ends with.
const hint = "; pass --tokenizer builtin for Qwen3's tokenizer, or --tokenizer PATH for a tokenizer.json or its folder"

// LoadWithOptions returns the tokenizer spec names, looked for in this order: "builtin"; a
// tokenizer.json or a folder holding one; for a model id ("org/name", optionally
// "org/name@revision"), the local HuggingFace cache at the revision asked for; the table
// of models known to ship the builtin tokenizer byte for byte (BuiltinModels), with one
// notice on opts.Progress; else, unless opts.Offline, tokenizer.json and
// tokenizer_config.json downloaded from the Hub into the cache (see downloadFromHub).
// The tokenizer's Name is spec, with "@revision" when a revision other than main was
// asked for, so that it loads again from the cache.
func LoadWithOptions(spec string, opts LoadOptions) (*Tokenizer, error) {
	if spec == "builtin" || spec == BuiltinName {
		return Builtin()
	}
	path, name, err := resolve(spec, &opts)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %q: %w", spec, err)
	}
	if path == "" { // the builtin stands in for the model id
		return Builtin()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %q: %w", spec, err)
	}
	t, err := parse(data)
	if err != nil {
		if opts.TrustRemoteCode {
			err = fmt.Errorf("%w (--tokenizer-trust-remote-code runs no code here: only tokenizer.json is read)", err)
		}
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	t.name = name
	return t, nil
}

// resolve turns a spec into the path of a tokenizer.json and the tokenizer's name; an
// empty path means the builtin tokenizer.
func resolve(spec string, opts *LoadOptions) (path, name string, err error) {
	if spec == "" {
		return "", "", errors.New(`empty; want "builtin", a tokenizer.json, its folder, or a model id`)
	}
	if fi, err := os.Stat(spec); err == nil {
		if !fi.IsDir() {
			return spec, spec, nil
		}
		p := filepath.Join(spec, "tokenizer.json")
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("folder has no tokenizer.json")
		}
		return p, spec, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	id, rev, err := splitRevision(spec, opts.Revision)
	if err != nil {
		return "", "", err
	}
	if !isModelID(id) {
		return "", "", errors.New("no such file or folder")
	}
	name = id
	if rev != "main" {
		name = id + "@" + rev
	}
	hub, err := opts.hubDir()
	if err != nil {
		return "", "", err
	}
	p, cacheErr := findInHub(hub, id, rev, opts.Revision != "" || strings.Contains(spec, "@"))
	if cacheErr == nil {
		return p, name, nil
	}
	if rev == "main" && IsBuiltinModel(id) {
		notef(opts.Progress, "tokenizer: %s ships the builtin Qwen3 tokenizer (tokenizer.json SHA-256 %.12s…): using it, nothing downloaded", id, builtinSHA256)
		return "", BuiltinName, nil
	}
	if opts.Offline {
		return "", "", fmt.Errorf("%v, and the Hub may not be asked (offline, as with HF_HUB_OFFLINE=1)%s", cacheErr, hint)
	}
	p, err = downloadFromHub(hub, id, rev, opts)
	if err != nil {
		return "", "", err
	}
	return p, name, nil
}

// splitRevision cuts "org/name@revision" and reconciles it with the revision option.
func splitRevision(spec, optRev string) (id, rev string, err error) {
	id, rev = spec, optRev
	if i := strings.LastIndexByte(spec, '@'); i > 0 {
		id = spec[:i]
		r := spec[i+1:]
		if r == "" {
			return "", "", errors.New(`empty revision after "@"`)
		}
		if optRev != "" && optRev != r {
			return "", "", fmt.Errorf("revision %q in the spec but %q asked for (--tokenizer-revision)", r, optRev)
		}
		rev = r
	}
	if rev == "" {
		rev = "main"
	}
	if strings.Contains(rev, "..") || strings.ContainsAny(rev, `\`) || strings.HasPrefix(rev, "/") {
		return "", "", fmt.Errorf("revision %q is not a branch, tag or commit", rev)
	}
	return id, rev, nil
}

// notef writes one notice line to w, if any.
func notef(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// isModelID reports whether spec looks like "org/name" or "name" (HuggingFace repo ids).
func isModelID(spec string) bool {
	parts := strings.Split(spec, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.HasPrefix(p, ".") || strings.ContainsAny(p, `\:`) {
			return false
		}
	}
	return true
}

// findInHub finds tokenizer.json in the hub cache layout
// hub/models--ORG--NAME/snapshots/<commit>/, at the commit refs/<rev> names, or at rev itself
// when it is a commit. When the revision was not asked for explicitly and refs/main does not
// lead to a tokenizer.json, the most recently modified snapshot is taken.
func findInHub(hub, id, rev string, explicit bool) (string, error) {
	repo := filepath.Join(hub, repoFolder(id))
	if _, err := os.Stat(repo); err != nil {
		return "", fmt.Errorf("no such file or folder, and no model %s in the HuggingFace cache (%s)", id, repo)
	}
	commit := rev
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", filepath.FromSlash(rev))); err == nil {
		commit = strings.TrimSpace(string(ref))
	}
	if commit != "" && !strings.ContainsAny(commit, `/\`) && commit != "." && commit != ".." {
		p := filepath.Join(repo, "snapshots", commit, "tokenizer.json")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if explicit {
		return "", fmt.Errorf("model %s is in the HuggingFace cache (%s) but not at revision %s", id, repo, rev)
	}
	paths, _ := filepath.Glob(filepath.Join(repo, "snapshots", "*", "tokenizer.json"))
	type cand struct {
		path string
		mod  int64
	}
	var cands []cand
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			cands = append(cands, cand{p, fi.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("model %s is in the HuggingFace cache (%s) but no snapshot has a tokenizer.json", id, repo)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].mod != cands[j].mod {
			return cands[i].mod > cands[j].mod
		}
		return cands[i].path > cands[j].path
	})
	return cands[0].path, nil
}

// repoFolder is the cache folder of a model repository: models--ORG--NAME.
func repoFolder(id string) string { return "models--" + strings.ReplaceAll(id, "/", "--") }
