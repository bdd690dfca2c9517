package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the built-in tokenizer.json
	"fmt"
	"io"
	"sync"
)

// qwen3GZ is Qwen3's tokenizer.json (from the Qwen/Qwen3 model repositories, Apache-2.0),
// gzip-compressed: 2 MB in the binary instead of 11 MB, so that a fresh machine can
// tokenize without downloading anything.
//
//go:embed qwen3-tokenizer.json.gz
var qwen3GZ []byte

// BuiltinName is the Name of the built-in tokenizer.
const BuiltinName = "builtin:qwen3"

var (
	builtinOnce sync.Once
	builtinTok  *Tokenizer
	builtinErr  error
)

// Builtin returns the Qwen3 tokenizer embedded in the binary. It is decompressed and
// parsed on first use (a fraction of a second) and shared afterwards; like every
// Tokenizer it is safe for concurrent use.
func Builtin() (*Tokenizer, error) {
	builtinOnce.Do(func() {
		builtinTok, builtinErr = parseBuiltin()
	})
	return builtinTok, builtinErr
}

func parseBuiltin() (*Tokenizer, error) {
	zr, err := gzip.NewReader(bytes.NewReader(qwen3GZ))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", BuiltinName, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", BuiltinName, err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, BuiltinName)
	}
	t.name = BuiltinName
	return t, nil
}
