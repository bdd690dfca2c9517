package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/llmbench/llmbench/plan/dataset"
	"github.com/llmbench/llmbench/tokenizer"
)

// Source is where a plan's requests come from, beside Options: the input file and how it is
// read, the tokenizer, the prompt corpus. These are the plan command's options that are not
// Options one to one: they are loaded into Options.Dataset, Tokenizer and Corpus.
type Source struct {
	// InputFile is a dataset or trace file (a folder for random_pool/raw_payload); "" for
	// synthetic requests. DatasetType is its format ("" detects it).
	InputFile, DatasetType string
	// PublicDataset names a public dataset: refused (plan never uses the network).
	PublicDataset string
	// BlockSize is the tokens per hash_id block of traces (0: the format's default).
	BlockSize int
	// MaxLineBytes refuses a longer input line (line-based formats).
	MaxLineBytes int
	// Synthesis scales and bounds a trace's rows.
	Synthesis dataset.Synthesis
	// Tokenizer is "builtin", a tokenizer.json path or folder, or a HuggingFace model id; ""
	// takes it from the model (TokenizerSpec). Revision and TrustRemoteCode are its loading
	// options.
	Tokenizer, TokenizerRevision string
	TrustRemoteCode              bool
	// PromptCorpus is the synthetic text source: shakespeare (the embedded corpus) or a
	// text file.
	PromptCorpus string
}

// Check checks s on its own (no file read), so that a typo fails at once.
func (s *Source) Check() error {
	if err := s.Synthesis.Check(); err != nil {
		return err
	}
	if s.BlockSize < 0 || s.BlockSize > dataset.MaxPromptTokens {
		return fmt.Errorf("--isl-block-size %d: want tokens in [0, %d]", s.BlockSize, dataset.MaxPromptTokens)
	}
	if s.MaxLineBytes < 1 || s.MaxLineBytes > dataset.MaxLineBytesLimit {
		return fmt.Errorf("--max-line-bytes %d: want bytes in [1, %d]", s.MaxLineBytes, dataset.MaxLineBytesLimit)
	}
	if s.PromptCorpus == "random" {
		return errors.New("--prompt-corpus random (random token ids) is not supported: use shakespeare or a text file")
	}
	if s.PublicDataset != "" {
		return fmt.Errorf("--public-dataset %s: downloading is not supported (plan never uses the network); fetch the file and pass --input-file with --custom-dataset-type", s.PublicDataset)
	}
	return nil
}

// TokenizerSpec is the tokenizer a plan for model is compiled with (TokenizerSpec).
func (s *Source) TokenizerSpec(model string) string { return TokenizerSpec(s.Tokenizer, model) }

// TokenizerSpec resolves a --tokenizer: as given, else the model id when it looks like a
// HuggingFace one (org/name), else the builtin tokenizer (AIPerf also falls back to its
// builtin for placeholder model names).
func TokenizerSpec(tokenizer, model string) string {
	switch {
	case tokenizer != "":
		return tokenizer
	case strings.Contains(model, "/"):
		return model
	}
	return "builtin"
}

// Corpus loads the prompt corpus under tok: the embedded one, or a text file.
func (s *Source) Corpus(tok *tokenizer.Tokenizer) (*dataset.Corpus, error) {
	if s.PromptCorpus == "shakespeare" {
		return dataset.LoadCorpus(tok)
	}
	b, err := os.ReadFile(s.PromptCorpus)
	if err != nil {
		return nil, fmt.Errorf("--prompt-corpus: want shakespeare or a text file: %w", err)
	}
	c, err := dataset.CorpusFromText(tok, b)
	if err != nil {
		return nil, fmt.Errorf("--prompt-corpus %s: %w", s.PromptCorpus, err)
	}
	return c, nil
}

// LoadDataset reads the input file under o's tokenizer, corpus, seed, sampling and sessions.
func (s *Source) LoadDataset(o *Options) (*dataset.Dataset, error) {
	return dataset.LoadFile(dataset.FileOptions{
		Path: s.InputFile, Type: s.DatasetType, BlockSize: s.BlockSize,
		Tokenizer: o.Tokenizer, Corpus: o.Corpus, Seed: o.Seed,
		SamplingStrategy: o.SamplingStrategy, NumConversations: o.NumSessions, Synthesis: s.Synthesis,
		IdleGapCapNs: int64(math.Round(o.TraceIdleGapCapSeconds * 1e9)), MaxLineBytes: s.MaxLineBytes,
	})
}

// ReadPayloadTemplate resolves a --payload-template: "@FILE", or a value that names an
// existing file and holds no "{" (AIPerf takes a path there too), is read from that file;
// anything else is the template source itself.
func ReadPayloadTemplate(v string) (string, error) {
	path, fromFile := strings.CutPrefix(v, "@")
	if !fromFile && v != "" && !strings.Contains(v, "{") {
		if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
			fromFile = true
		}
	}
	if !fromFile {
		return v, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--payload-template: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", fmt.Errorf("--payload-template %s: the file is empty", path)
	}
	return string(b), nil
}

// ParseExtraInputs parses --extra-inputs values: "key:value" with the value read as JSON
// when it is JSON (true, 128, 0.5, "s", [..], {..}) and as a plain string otherwise, or a
// whole JSON object. Later values win.
func ParseExtraInputs(vals []string) (map[string]any, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := make(map[string]any)
	for _, v := range vals {
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			var m map[string]any
			if err := decodeJSON(v, &m); err != nil {
				return nil, fmt.Errorf("--extra-inputs %q: invalid JSON object: %v", v, err)
			}
			for k, x := range m {
				out[k] = x
			}
			continue
		}
		k, raw, ok := strings.Cut(v, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--extra-inputs %q: want key:value or a JSON object", v)
		}
		var x any
		if err := decodeJSON(raw, &x); err != nil {
			x = raw
		}
		out[k] = x
	}
	return out, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as written (json.Number), so
// "min_tokens:128" stays 128 rather than 128.0.
func decodeJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	var rest bytes.Buffer
	if _, err := rest.ReadFrom(dec.Buffered()); err == nil && strings.TrimSpace(rest.String()) != "" {
		return errors.New("trailing data")
	}
	return nil
}
