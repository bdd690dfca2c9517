package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/cmd/internal/cli"
	"github.com/llmbench/llmbench/tokenizer"
)

const tokenizeUsage = `usage: plan tokenize [--tokenizer X] [--count] [--jsonl] < TEXT

Reads UTF-8 text on stdin and prints its token ids as one JSON array, or with --count
the number of tokens. With --jsonl every input line is a JSON object with a "text" field
and every output line holds that text's ids (or count). No special tokens are added
unless --add-special-tokens is given.

flags:
`

// runTokenize is `plan tokenize`: encode stdin under a tokenizer (Tokenizer.EncodeStream).
func runTokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("plan tokenize", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	spec := fs.String("tokenizer", "builtin", `"builtin" (Qwen3), a tokenizer.json path or folder, or a HuggingFace model id in the local cache ($HF_HOME/hub)`)
	count := fs.Bool("count", false, "print the number of tokens instead of the ids")
	jsonl := fs.Bool("jsonl", false, `read one JSON object with a "text" field per line, print one result per line`)
	special := fs.Bool("add-special-tokens", false, "add what the tokenizer's post-processor adds (Llama 3's BOS; nothing for Qwen)")
	help := fs.BoolP("help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("tokenize: %w (see plan tokenize --help)", err))
	}
	if *help {
		fmt.Fprintf(stdout, "%s%s", tokenizeUsage, fs.FlagUsages())
		return 0
	}
	if fs.NArg() > 0 {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("tokenize: unexpected argument %q (the text is read from stdin)", fs.Arg(0)))
	}
	tok, err := tokenizer.LoadWithOptions(*spec, tokenizer.EnvLoadOptions(os.Getenv))
	if err != nil {
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("tokenize: --tokenizer: %w", err))
	}
	err = tok.EncodeStream(stdin, stdout, tokenizer.StreamOptions{Count: *count, JSONL: *jsonl, AddSpecialTokens: *special})
	var bad *tokenizer.InputError
	switch {
	case errors.As(err, &bad):
		return cli.Fail(stderr, "plan", 2, fmt.Errorf("tokenize: %w", err))
	case err != nil:
		return cli.Fail(stderr, "plan", 1, fmt.Errorf("tokenize: %w", err))
	}
	return 0
}
