package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the built-in tokenizer.json
	"fmt"
	"io"
	"strings"
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

// builtinSHA256 is the SHA-256 of the builtin tokenizer.json (uncompressed): the file the
// Qwen3 repositories publish, and the X-Linked-Etag the Hub answers for it.
const builtinSHA256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"

// builtinModels are the HuggingFace model ids whose tokenizer.json is the builtin one byte
// for byte, by SHA-256 (docs/tokenizers.md says where each hash was read). Resolving one
// of these needs neither the cache nor the network.
var builtinModels = []string{
	"Qwen/Qwen3-0.6B",
	"Qwen/Qwen3-1.7B",
	"Qwen/Qwen3-8B",
	"Qwen/Qwen3-14B",
	"Qwen/Qwen3-4B-Instruct-2507",
	"Qwen/Qwen3-4B-Thinking-2507",
}

// BuiltinModels returns the model ids known to ship the builtin tokenizer.
func BuiltinModels() []string { return append([]string(nil), builtinModels...) }

// IsBuiltinModel reports whether id is one of BuiltinModels (the Hub's ids are not case
// sensitive).
func IsBuiltinModel(id string) bool {
	for _, m := range builtinModels {
		if strings.EqualFold(m, id) {
			return true
		}
	}
	return false
}
