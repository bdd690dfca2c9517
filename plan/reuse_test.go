package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/plan/dataset"
)

// sharedPrompt is what a request's prompt shares with the earlier records' prompts, found
// from the bodies alone: the longest run of leading messages (role and text) that an
// earlier body of the same model and tools began with, plus the common start of the next
// message's text; its tokens are those of that text, the messages joined by a space.
type sharedPrompt struct {
	model, tools string
	msgs         [][2]string
}

func bodyPrompt(t *testing.T, body []byte) sharedPrompt {
	t.Helper()
	var b struct {
		Model    string          `json:"model"`
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body: %v", err)
	}
	p := sharedPrompt{model: b.Model, tools: string(b.Tools)}
	for _, m := range b.Messages {
		p.msgs = append(p.msgs, [2]string{m.Role, m.Content})
	}
	return p
}

// sharedText is the text request p shares with q (both of one scope).
func sharedText(p, q sharedPrompt) string {
	var parts []string
	for i := range p.msgs {
		if i >= len(q.msgs) || p.msgs[i][0] != q.msgs[i][0] {
			break
		}
		a, b := p.msgs[i][1], q.msgs[i][1]
		if a == b {
			parts = append(parts, a)
			continue
		}
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		parts = append(parts, a[:n])
		break
	}
	return strings.Join(parts, " ")
}

// TestOfferedReuseIsSharedText: the offered prefix reuse the plan records (graph nodes'
// Reuse; the profile's sum in the meta, which plan inspect and analyze show) is what the
// rendered bodies really share with earlier ones, in whole 16-token blocks: never more than
// the tokens of the shared text, and less by under a block (and a token at a message
// junction). Hash ids never stand in for bytes: traces whose requests name different models
// send the same blocks to different caches.
func TestOfferedReuseIsSharedText(t *testing.T) {
	tok := testTokenizer(t)
	twoModels := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(twoModels, []byte(`{"id": "mm", "models": ["x", "y"], "block_size": 16, "hash_id_scope": "local", "tool_tokens": 16, "requests": [`+
		`{"t": 0, "type": "n", "model": "x", "in": 64, "out": 4, "hash_ids": [1, 2, 3, 4]}, `+
		`{"t": 1, "type": "n", "model": "y", "in": 64, "out": 4, "hash_ids": [1, 2, 3, 4]}, `+
		`{"t": 2, "type": "n", "model": "x", "in": 80, "out": 4, "hash_ids": [1, 2, 3, 4, 5]}]}`), 0o644)
	shared := strings.Repeat(" the king and his lord", 20)
	singleTurn := filepath.Join(t.TempDir(), "st.jsonl")
	os.WriteFile(singleTurn, []byte(`{"text": "`+shared+` rode north"}`+"\n"+`{"text": "`+shared+` sailed west"}`+"\n"+`{"text": "a different start"}`+"\n"), 0o644)
	load := func(path, typ string) *dataset.Dataset {
		ds, err := dataset.LoadFile(dataset.FileOptions{Path: path, Type: typ, Tokenizer: tok})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	cases := []struct {
		name string
		set  func(o *Options)
		// minReused: the least offered reuse over the profile, so the check cannot pass on a
		// plan that offers none.
		minReused int64
	}{
		{"weka global cache-bust", func(o *Options) {
			o.Dataset = load(filepath.Join(agenticTestdata, "weka_global"), dataset.TypeWeka)
			o.NoFixedSchedule, o.Concurrency, o.NumSessions, o.CacheBust, o.SamplingStrategy = true, 1, 4, "first_turn_prefix", "sequential"
		}, 16},
		{"weka local", func(o *Options) {
			o.Dataset = load(filepath.Join(agenticTestdata, "weka"), dataset.TypeWeka)
		}, 16},
		{"weka two models", func(o *Options) {
			o.Dataset = load(twoModels, dataset.TypeWeka)
			o.Model = "a,b"
		}, 64},
		{"mooncake", func(o *Options) {
			o.Dataset = load(filepath.Join(agenticTestdata, "mooncake_small.jsonl"), dataset.TypeMooncake)
		}, 16},
		{"single_turn shared start", func(o *Options) {
			o.Dataset = load(singleTurn, dataset.TypeSingleTurn)
			o.SamplingStrategy = "sequential"
		}, 64},
		{"multi_turn history", func(o *Options) {
			o.Dataset = load(filepath.Join(agenticTestdata, "multi_turn.jsonl"), dataset.TypeMultiTurn)
		}, 0},
		{"synthetic shared system prompt", func(o *Options) {
			o.SharedSystemPromptLength, o.ISLMean, o.RequestCount = 100, 40, 10
		}, 9 * 96},
		{"synthetic multi-turn", func(o *Options) {
			o.ConversationTurnMean, o.ISLMean, o.NumSessions = 3, 40, 3
		}, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			c.set(&o)
			p, _ := compileOpen(t, o)
			m := p.Meta()
			if m.PrefixReuseBlockTokens != dataset.ReuseBlockTokens {
				t.Fatalf("meta block tokens %d", m.PrefixReuseBlockTokens)
			}
			var earlier []sharedPrompt
			var reused, prompt int64
			for i := 0; i < p.Len(); i++ {
				r, body, err := p.Record(i)
				if err != nil {
					t.Fatal(err)
				}
				cur := bodyPrompt(t, body)
				shared := 0
				for _, q := range earlier {
					if q.model == cur.model && q.tools == cur.tools {
						shared = max(shared, tok.Count(sharedText(cur, q)))
					}
				}
				earlier = append(earlier, cur)
				var got int
				if p.HasGraph() {
					got = int(p.GraphNode(i).Reuse)
				} else {
					// Plans without a graph record the profile's sum: check it below.
					got = min(shared/dataset.ReuseBlockTokens*dataset.ReuseBlockTokens, int(r.ISL))
				}
				if got > shared+1 || got < shared-dataset.ReuseBlockTokens-1 && got < int(r.ISL)-dataset.ReuseBlockTokens {
					t.Errorf("record %d (model %s, isl %d): offered reuse %d, but it shares %d tokens with earlier bodies", i, cur.model, r.ISL, got, shared)
				}
				if r.Phase == mmapds.PhaseProfile {
					reused += int64(got)
					prompt += int64(r.ISL)
				}
			}
			if m.ProfilePromptTokens != prompt {
				t.Errorf("meta prompt tokens %d, records' ISL %d", m.ProfilePromptTokens, prompt)
			}
			slack := int64(p.Len()) * (dataset.ReuseBlockTokens + 1)
			if d := m.ProfileReusedTokens - reused; d > int64(p.Len()) || d < -slack {
				t.Errorf("meta reused tokens %d, the bodies share %d", m.ProfileReusedTokens, reused)
			}
			if m.ProfileReusedTokens < c.minReused {
				t.Errorf("offered reuse %d, want at least %d", m.ProfileReusedTokens, c.minReused)
			}
			t.Logf("offered %d of %d", m.ProfileReusedTokens, m.ProfilePromptTokens)
		})
	}
}
