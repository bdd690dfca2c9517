package mockllm

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"
)

func TestEmbeddings(t *testing.T) {
	o := testOptions()
	o.EmbeddingDim = 16
	base := startServer(t, o)
	cases := []struct {
		name, body string
		items, dim int
		tokens     int
	}{
		{"string", `{"model":"e","input":"hello world"}`, 1, 16, 2},
		{"list", `{"input":["hello","hello world"]}`, 2, 16, 3},
		{"token ids", `{"input":[1,2,3,4]}`, 1, 16, 4},
		{"token id lists", `{"input":[[1,2],[3]]}`, 2, 16, 3},
		{"chat embeddings", `{"messages":[{"role":"user","content":"hello world"}]}`, 1, 16, 2},
		{"nim query", `{"input":["hello"],"input_type":"query"}`, 1, 16, 1},
		{"nim passage dims", `{"input":["hello"],"input_type":"passage","dimensions":8}`, 1, 8, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := postJSON(t, base+"/v1/embeddings", tc.body)
			data := m["data"].([]any)
			if len(data) != tc.items || m["object"] != "list" {
				t.Fatalf("%d items, want %d", len(data), tc.items)
			}
			for i, d := range data {
				vec := path(d, "embedding").([]any)
				if len(vec) != tc.dim || num(path(d, "index")) != i {
					t.Errorf("item %d: dim %d index %v", i, len(vec), path(d, "index"))
				}
				var n float64
				for _, v := range vec {
					n += v.(float64) * v.(float64)
				}
				if math.Abs(n-1) > 1e-3 {
					t.Errorf("item %d: norm² %v, want 1", i, n)
				}
			}
			if got := num(path(m, "usage.prompt_tokens")); got != tc.tokens {
				t.Errorf("prompt tokens %d, want %d", got, tc.tokens)
			}
		})
	}
	// base64 carries the same float32 vector; the same text, the same vector.
	f := postJSON(t, base+"/v1/embeddings", `{"input":"hello"}`)
	b := postJSON(t, base+"/v1/embeddings", `{"input":"hello","encoding_format":"base64"}`)
	raw, err := base64.StdEncoding.DecodeString(str(path(b, "data.0.embedding")))
	if err != nil || len(raw) != 64 {
		t.Fatalf("base64 embedding: %v, %d bytes", err, len(raw))
	}
	for i, v := range path(f, "data.0.embedding").([]any) {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); float64(got) != float64(float32(v.(float64))) {
			t.Fatalf("dim %d: base64 %v, float %v", i, got, v)
		}
	}
}
