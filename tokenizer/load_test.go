package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hubTokenizers writes two distinguishable tokenizers: one whose added token "<X>" is 300,
// one where it is 301.
func hubTokenizers(t *testing.T) (a, b []byte) {
	a = synth{added: []map[string]any{addedTok(300, "<X>", nil)}}.json(t)
	b = synth{added: []map[string]any{addedTok(301, "<X>", nil)}}.json(t)
	return a, b
}

func xID(t *testing.T, tok *Tokenizer) int {
	t.Helper()
	id, ok := tok.TokenID("<X>")
	if !ok {
		t.Fatal("no <X>")
	}
	return id
}

func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	a, _ := hubTokenizers(t)
	file := filepath.Join(dir, "m", "tokenizer.json")
	writeFile(t, file, a)
	for _, spec := range []string{file, filepath.Dir(file)} {
		tok, err := Load(spec)
		if err != nil {
			t.Fatalf("Load(%q): %v", spec, err)
		}
		if tok.Name() != spec || xID(t, tok) != 300 {
			t.Errorf("Load(%q): name %q", spec, tok.Name())
		}
		if !slices.Equal(tok.Encode("hi<X>"), []int{'h', 'i', 300}) {
			t.Errorf("Load(%q) tokenizer encodes wrongly", spec)
		}
	}
	for spec, want := range map[string]string{
		dir:                             "no tokenizer.json",
		filepath.Join(dir, "nope.json"): "no such file",
		"":                              "empty",
	} {
		if _, err := Load(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) error %v, want it to say %q", spec, err, want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, []byte(`{"model": {"type": "Unigram"}}`))
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "Unigram") {
		t.Errorf("Load of an unsupported file: %v", err)
	}
}

func TestLoadHuggingFaceCache(t *testing.T) {
	home := t.TempDir()
	a, b := hubTokenizers(t)
	repo := filepath.Join(home, "hub", "models--Org--Model-7B")
	writeFile(t, filepath.Join(repo, "snapshots", "aaa111", "tokenizer.json"), a)
	writeFile(t, filepath.Join(repo, "snapshots", "bbb222", "tokenizer.json"), b)
	// Without refs/main the newest snapshot wins.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(repo, "snapshots", "bbb222", "tokenizer.json"), old, old); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadWithOptions("Org/Model-7B", LoadOptions{HFHome: home, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "Org/Model-7B" || xID(t, tok) != 300 {
		t.Errorf("newest snapshot: name %q, <X> = %d", tok.Name(), xID(t, tok))
	}
	// refs/main names the revision to use.
	writeFile(t, filepath.Join(repo, "refs", "main"), []byte("bbb222\n"))
	if tok, err = LoadWithOptions("Org/Model-7B", LoadOptions{HFHome: home, Offline: true}); err != nil || xID(t, tok) != 301 {
		t.Errorf("refs/main: %v", err)
	}
	// HubCache points at the hub folder itself.
	if tok, err = LoadWithOptions("Org/Model-7B", LoadOptions{HubCache: filepath.Join(home, "hub"), HFHome: "/nonexistent", Offline: true}); err != nil || xID(t, tok) != 301 {
		t.Errorf("HubCache: %v", err)
	}
	// A model that is not there names the folder it looked in.
	_, err = LoadWithOptions("Org/Other", LoadOptions{HFHome: home, Offline: true})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, "hub", "models--Org--Other")) {
		t.Errorf("missing model: %v", err)
	}
	writeFile(t, filepath.Join(home, "hub", "models--Org--Empty", "snapshots", "c", "config.json"), []byte("{}"))
	if _, err = LoadWithOptions("Org/Empty", LoadOptions{HFHome: home, Offline: true}); err == nil || !strings.Contains(err.Error(), "no snapshot has a tokenizer.json") {
		t.Errorf("model without tokenizer.json: %v", err)
	}
	if _, err = LoadWithOptions("a/b/c", LoadOptions{HFHome: home, Offline: true}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a path-like spec that does not exist: %v", err)
	}
}

func TestEnvLoadOptions(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env  map[string]string
		want LoadOptions
		hub  string
	}{
		{map[string]string{"HF_HOME": "/h"}, LoadOptions{HFHome: "/h"}, "/h/hub"},
		{map[string]string{"HF_HOME": "/h", "HF_HUB_CACHE": "/c"}, LoadOptions{HFHome: "/h", HubCache: "/c"}, "/c"},
		{map[string]string{"HUGGINGFACE_HUB_CACHE": "/old"}, LoadOptions{HubCache: "/old"}, "/old"},
		{map[string]string{"XDG_CACHE_HOME": "/x"}, LoadOptions{HFHome: "/x/huggingface"}, "/x/huggingface/hub"},
		{map[string]string{"HF_HOME": "/h", "HF_ENDPOINT": "http://mirror", "HF_TOKEN": "t", "HF_HUB_OFFLINE": "1"},
			LoadOptions{HFHome: "/h", Endpoint: "http://mirror", Token: "t", Offline: true}, "/h/hub"},
		{map[string]string{"HF_HOME": "/h", "HUGGING_FACE_HUB_TOKEN": "old", "HF_HUB_OFFLINE": "True"},
			LoadOptions{HFHome: "/h", Token: "old", Offline: true}, "/h/hub"},
		{map[string]string{"HF_HOME": "/h", "HF_HUB_OFFLINE": "0"}, LoadOptions{HFHome: "/h"}, "/h/hub"},
	}
	for _, tt := range tests {
		got := EnvLoadOptions(env(tt.env))
		if got != tt.want {
			t.Errorf("EnvLoadOptions(%v) = %+v, want %+v", tt.env, got, tt.want)
		}
		if hub, err := got.hubDir(); err != nil || hub != tt.hub {
			t.Errorf("hub folder for %v = %q, %v; want %q", tt.env, hub, err, tt.hub)
		}
	}
}
