package mockllm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image/png"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func postJSON(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp := post(t, url, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	if strings.HasPrefix(string(b), "[") {
		return jsonOf(t, `{"list":`+string(b)+`}`)
	}
	return jsonOf(t, string(b))
}

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

func TestRankings(t *testing.T) {
	base := startServer(t, testOptions())
	passages := []string{"alpha", "beta", "gamma", "delta"}
	check := func(t *testing.T, items []any, idxKey, scoreKey string, n int) {
		t.Helper()
		if len(items) != n {
			t.Fatalf("%d results, want %d", len(items), n)
		}
		seen := map[int]bool{}
		prev := math.Inf(1)
		for _, it := range items {
			i := num(path(it, idxKey))
			s := path(it, scoreKey).(float64)
			if seen[i] || i < 0 || i >= len(passages) {
				t.Errorf("bad or repeated index %d", i)
			}
			seen[i] = true
			if s > prev {
				t.Errorf("results not sorted by %s: %v after %v", scoreKey, s, prev)
			}
			prev = s
		}
	}
	t.Run("nim", func(t *testing.T) {
		m := postJSON(t, base+"/v1/ranking", `{"model":"r","query":{"text":"q"},"passages":[{"text":"alpha"},{"text":"beta"},{"text":"gamma"},{"text":"delta"}]}`)
		check(t, m["rankings"].([]any), "index", "logit", 4)
	})
	t.Run("tei", func(t *testing.T) {
		m := postJSON(t, base+"/rerank", `{"query":"q","texts":["alpha","beta","gamma","delta"],"return_text":true}`)
		items := m["list"].([]any)
		check(t, items, "index", "score", 4)
		for _, it := range items {
			if s := path(it, "score").(float64); s < 0 || s > 1 || path(it, "text") != passages[num(path(it, "index"))] {
				t.Errorf("item %v", it)
			}
		}
	})
	t.Run("cohere", func(t *testing.T) {
		m := postJSON(t, base+"/v2/rerank", `{"model":"r","query":"q","documents":["alpha",{"text":"beta"},"gamma","delta"],"top_n":2}`)
		check(t, m["results"].([]any), "index", "relevance_score", 2)
		if str(m["id"]) == "" || path(m, "meta.billed_units.search_units") == nil || num(path(m, "meta.tokens.input_tokens")) != fakeTok.Count("q")+fakeTok.Count("alpha")+fakeTok.Count("beta")+fakeTok.Count("gamma")+fakeTok.Count("delta") {
			t.Errorf("cohere envelope: %v", m)
		}
	})
	// The same pair scores the same across APIs (NIM logit, TEI sigmoid).
	n := postJSON(t, base+"/v1/ranking", `{"query":{"text":"q"},"passages":[{"text":"alpha"}]}`)
	r := postJSON(t, base+"/rerank", `{"query":"q","texts":["alpha"],"raw_scores":true}`)
	if path(n, "rankings.0.logit") != path(r, "list.0.score") {
		t.Errorf("NIM logit %v, TEI raw score %v", path(n, "rankings.0.logit"), path(r, "list.0.score"))
	}
}

func TestImages(t *testing.T) {
	o := testOptions()
	o.ITL = 3 * time.Millisecond
	base := startServer(t, o)
	decode := func(t *testing.T, b []byte) (int, int) {
		t.Helper()
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy()
	}
	m := postJSON(t, base+"/v1/images/generations", `{"prompt":"a cat","n":2,"size":"1024x512","response_format":"b64_json"}`)
	data := m["data"].([]any)
	if len(data) != 2 || num(path(m, "usage.input_tokens")) != fakeTok.Count("a cat") {
		t.Fatalf("data %d, usage %v", len(data), m["usage"])
	}
	var first []byte
	for i, d := range data {
		b, err := base64.StdEncoding.DecodeString(str(path(d, "b64_json")))
		if err != nil {
			t.Fatal(err)
		}
		if w, h := decode(t, b); w != 64 || h != 32 {
			t.Errorf("image %d is %dx%d, want 64x32 (1024x512 scaled)", i, w, h)
		}
		if i == 0 {
			first = b
		} else if bytes.Equal(first, b) {
			t.Error("two images of one request are identical")
		}
	}
	m2 := postJSON(t, base+"/v1/images/generations", `{"prompt":"a cat","n":2,"size":"1024x512","response_format":"b64_json"}`)
	if path(m2, "data.0.b64_json") != path(m, "data.0.b64_json") {
		t.Error("same request, different image")
	}
	u := postJSON(t, base+"/v1/images/generations", `{"prompt":"a dog","response_format":"url","size":"256x256"}`)
	url := str(path(u, "data.0.url"))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if w, h := decode(t, b); w != 64 || h != 64 {
		t.Errorf("url image %dx%d", w, h)
	}
	// Streaming: partial images, then the completed one, ITL apart.
	retryTiming(t, func() error {
		t0 := time.Now()
		resp = post(t, base+"/v1/images/generations", `{"prompt":"p","stream":true,"partial_images":2}`)
		evs, err := readSSE(resp.Body)
		resp.Body.Close()
		if err != nil || len(evs) != 3 {
			t.Fatalf("%d events, err %v", len(evs), err)
		}
		for i, want := range []string{"image_generation.partial_image", "image_generation.partial_image", "image_generation.completed"} {
			if evs[i].name != want || str(jsonOf(t, evs[i].data)["type"]) != want {
				t.Errorf("event %d: %q", i, evs[i].name)
			}
			raw, _ := base64.StdEncoding.DecodeString(str(jsonOf(t, evs[i].data)["b64_json"]))
			decode(t, raw)
		}
		// A late client can only see events later: the last one
		// arriving 2 ITL after the request shows the server spaced them.
		if d := evs[2].at.Sub(t0); d < 2*o.ITL {
			return fmt.Errorf("last image event after %v, want at least 2 ITL (%v)", d, 2*o.ITL)
		}
		return nil
	})
}
