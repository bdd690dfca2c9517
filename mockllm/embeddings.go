package mockllm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
	"github.com/llmbench/llmbench/plan/media"
)

// embeddings serves OpenAI, vLLM chat-style and NIM embeddings.
func (s *Server) embeddings(body []byte, h uint64) (*prerendered, error) {
	var b struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Messages       []chatMessage   `json:"messages"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     json.Number     `json:"dimensions"`
		InputType      string          `json:"input_type"`
	}
	if err := decodeJSON("embeddings", body, &b); err != nil {
		return nil, err
	}
	switch b.InputType {
	case "", "query", "passage":
	default:
		return nil, badf("embeddings: input_type: want \"query\" or \"passage\", got %q", b.InputType)
	}
	switch b.EncodingFormat {
	case "", "float", "base64":
	default:
		return nil, badf("embeddings: encoding_format: want \"float\" or \"base64\", got %q", b.EncodingFormat)
	}
	dim, err := optInt(b.Dimensions, "embeddings: dimensions", 1)
	if err != nil {
		return nil, err
	}
	if dim == 0 {
		dim = s.opts.EmbeddingDim
	}
	if dim > 65536 {
		return nil, badf("embeddings: dimensions: at most 65536")
	}
	// Each input is a text (counted with the tokenizer) or a list of
	// token ids (counted as given; its printed form seeds the vector).
	type input struct {
		text   string
		tokens int // -1: count text
	}
	var inputs []input
	in := bytes.TrimSpace(b.Input)
	switch {
	case len(b.Messages) > 0:
		var mu mediaUse
		t, err := joinMessages("embeddings", b.Messages, &mu, &s.opts.Media)
		if err != nil {
			return nil, err
		}
		inputs = []input{{t, -1}}
		if mt := s.opts.Media.tokens(&mu); mt > 0 {
			inputs[0].tokens = s.opts.Tokenizer.Count(t) + mt
		}
	case len(in) == 0 || string(in) == "null":
		return nil, badf("embeddings: input: required (or messages)")
	default:
		var one string
		var many []string
		var ids []int64
		var idLists [][]int64
		switch {
		case json.Unmarshal(in, &one) == nil:
			inputs = []input{{one, -1}}
		case json.Unmarshal(in, &many) == nil && len(many) > 0:
			for i, t := range many {
				if isImageDataURL(t) { // NIM embeddings: an image, checked, not tokenized
					if err := checkURL(media.Image, t); err != nil {
						return nil, badf("embeddings: input[%d]: %v", i, err)
					}
					inputs = append(inputs, input{"", s.opts.Media.ImageTokens})
					continue
				}
				inputs = append(inputs, input{t, -1})
			}
		case json.Unmarshal(in, &ids) == nil && len(ids) > 0:
			inputs = []input{{fmt.Sprint(ids), len(ids)}}
		case json.Unmarshal(in, &idLists) == nil && len(idLists) > 0:
			for _, l := range idLists {
				inputs = append(inputs, input{fmt.Sprint(l), len(l)})
			}
		default:
			return nil, badf("embeddings: input: want a string, a non-empty list of strings or of token ids")
		}
	}
	if len(inputs) > maxEmbeddingInputs {
		return nil, badf("embeddings: input: %d items, at most %d", len(inputs), maxEmbeddingInputs)
	}
	if len(inputs)*dim > maxEmbeddingValues {
		return nil, badf("embeddings: %d inputs of %d dimensions: over this server's limit of %d values", len(inputs), dim, maxEmbeddingValues)
	}
	tokens := 0
	model := b.Model
	if model == "" {
		model = s.opts.Model
	}
	out := []byte(`{"object":"list","data":[`)
	vec := make([]float32, dim)
	raw := make([]byte, 4*dim)
	for i, in := range inputs {
		if in.tokens < 0 {
			in.tokens = s.opts.Tokenizer.Count(in.text)
		}
		tokens += in.tokens
		r := newRNG(s.opts.Seed, fnv64a([]byte(in.text)), saltText)
		var norm float64
		for k := range vec {
			v := r.NormFloat64()
			vec[k] = float32(v)
			norm += v * v
		}
		scale := float32(1 / math.Sqrt(norm))
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"object":"embedding","index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, `,"embedding":`...)
		if b.EncodingFormat == "base64" {
			for k, v := range vec {
				binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(v*scale))
			}
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, raw)
			out = append(out, '"')
		} else {
			out = append(out, '[')
			for k, v := range vec {
				if k > 0 {
					out = append(out, ',')
				}
				var err error
				if out, err = jsonwire.AppendFloat(out, float64(v*scale), 32); err != nil {
					return nil, fmt.Errorf("embeddings: input %d: %w", i, err)
				}
			}
			out = append(out, ']')
		}
		out = append(out, '}')
	}
	out = append(out, `],"model":`...)
	out = jsonwire.AppendString(out, model)
	out = append(out, `,"usage":{"prompt_tokens":`...)
	out = strconv.AppendInt(out, int64(tokens), 10)
	out = append(out, `,"total_tokens":`...)
	out = strconv.AppendInt(out, int64(tokens), 10)
	out = append(out, `}}`...)
	return &prerendered{body: out, tokens: tokens}, nil
}

// maxEmbeddingInputs is OpenAI's limit on inputs per request.
const maxEmbeddingInputs = 2048

// maxEmbeddingValues bounds one response (inputs × dimensions).
const maxEmbeddingValues = 1 << 24
