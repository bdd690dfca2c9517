package cli

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/export"
	"github.com/llmbench/llmbench/tokenizer"
)

// FileReport is the run page analyze writes into the run directory (docs/report.md).
const FileReport = export.FileReport

// htmlFlags are analyze's report.html flags.
type htmlFlags struct {
	off  bool
	path string
}

func addHTMLFlags(fs *pflag.FlagSet) *htmlFlags {
	h := &htmlFlags{}
	fs.BoolVar(&h.off, "no-html", false, "do not write "+FileReport)
	fs.StringVar(&h.path, "html", "", "write the HTML report to this file (default: "+FileReport+" in the output directory)")
	return h
}

// openTokenizer loads a tokenizer as every command does (docs/tokenizers.md), the
// environment's Hugging Face settings with it.
func openTokenizer(spec string) (*tokenizer.Tokenizer, error) {
	return tokenizer.LoadWithOptions(spec, tokenizer.EnvLoadOptions(os.Getenv))
}

// loadTokenizer is openTokenizer as analyze.Options.LoadTokenizer wants it (no typed nil).
func loadTokenizer(spec string) (analyze.TokenCounter, error) {
	t, err := openTokenizer(spec)
	if err != nil {
		return nil, err
	}
	return t, nil
}
