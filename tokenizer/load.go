package tokenizer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadOptions tells Load where the local HuggingFace cache is. Packages never read the
// environment; commands fill this with EnvLoadOptions(os.Getenv).
type LoadOptions struct {
	// HFHome is the HuggingFace home folder (HF_HOME); models are looked up in its hub
	// subfolder. Empty means ~/.cache/huggingface.
	HFHome string
	// HubCache is the hub cache folder itself (HF_HUB_CACHE); when set it wins over HFHome.
	HubCache string
}

// EnvLoadOptions returns the LoadOptions that HuggingFace's own libraries would derive
// from the environment: HF_HUB_CACHE (or the older HUGGINGFACE_HUB_CACHE), else HF_HOME,
// else $XDG_CACHE_HOME/huggingface. Commands pass os.Getenv.
func EnvLoadOptions(getenv func(string) string) LoadOptions {
	o := LoadOptions{HFHome: getenv("HF_HOME"), HubCache: getenv("HF_HUB_CACHE")}
	if o.HubCache == "" {
		o.HubCache = getenv("HUGGINGFACE_HUB_CACHE")
	}
	if o.HFHome == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			o.HFHome = filepath.Join(x, "huggingface")
		}
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
// that a Name() recorded in a plan loads again), a path to a
// tokenizer.json, a folder holding one, or a HuggingFace model id ("Qwen/Qwen3-8B") found
// in the local cache under ~/.cache/huggingface/hub. It never uses the network.
func Load(spec string) (*Tokenizer, error) {
	return LoadWithOptions(spec, LoadOptions{})
}

// LoadWithOptions is Load with an explicit HuggingFace cache location.
func LoadWithOptions(spec string, opts LoadOptions) (*Tokenizer, error) {
	if spec == "builtin" || spec == BuiltinName {
		return Builtin()
	}
	path, err := resolve(spec, opts)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %q: %w", spec, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %q: %w", spec, err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	t.name = spec
	return t, nil
}

// resolve turns a spec into the path of a tokenizer.json.
func resolve(spec string, opts LoadOptions) (string, error) {
	if spec == "" {
		return "", errors.New(`empty; want "builtin", a tokenizer.json, its folder, or a model id`)
	}
	if fi, err := os.Stat(spec); err == nil {
		if !fi.IsDir() {
			return spec, nil
		}
		p := filepath.Join(spec, "tokenizer.json")
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("folder has no tokenizer.json")
		}
		return p, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if !isModelID(spec) {
		return "", errors.New("no such file or folder")
	}
	hub, err := opts.hubDir()
	if err != nil {
		return "", err
	}
	return findInHub(hub, spec)
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
// hub/models--ORG--NAME/snapshots/<revision>/, preferring the revision refs/main names,
// else the most recently modified snapshot.
func findInHub(hub, id string) (string, error) {
	repo := filepath.Join(hub, "models--"+strings.ReplaceAll(id, "/", "--"))
	if _, err := os.Stat(repo); err != nil {
		return "", fmt.Errorf("no such file or folder, and no model %s in the HuggingFace cache (%s); download it first, the network is never used", id, repo)
	}
	if ref, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err == nil {
		rev := strings.TrimSpace(string(ref))
		p := filepath.Join(repo, "snapshots", rev, "tokenizer.json")
		if rev != "" && !strings.ContainsAny(rev, `/\`) {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
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
