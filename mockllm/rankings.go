package mockllm

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// maxPassages bounds a ranking request.
const maxPassages = 10000

// rankScore is a deterministic relevance logit in [-8, 8) for a pair.
func (s *Server) rankScore(query, passage string) float64 {
	return 16*unitFloat(mix(s.opts.Seed, fnv64a([]byte(query), []byte(passage)), saltText)) - 8
}

type ranked struct {
	index int
	logit float64
}

func (s *Server) rank(query string, passages []string) []ranked {
	out := make([]ranked, len(passages))
	for i, p := range passages {
		out[i] = ranked{i, s.rankScore(query, p)}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		switch {
		case a.logit > b.logit:
			return -1
		case a.logit < b.logit:
			return 1
		}
		return 0
	})
	return out
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// rankings serves NIM /v1/ranking, TEI /rerank and Cohere /v2/rerank.
func (s *Server) rankings(api apiKind, body []byte, _ uint64) (*prerendered, error) {
	var query string
	var passages []string
	var topN int
	var rawScores, returnText bool
	switch api {
	case apiNIMRankings:
		var b struct {
			Query *struct {
				Text string `json:"text"`
			} `json:"query"`
			Passages []struct {
				Text string `json:"text"`
			} `json:"passages"`
		}
		if err := decodeJSON("ranking", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("ranking: query.text: required")
		}
		query = b.Query.Text
		for _, p := range b.Passages {
			passages = append(passages, p.Text)
		}
	case apiTEIRerank:
		var b struct {
			Query      *string  `json:"query"`
			Texts      []string `json:"texts"`
			RawScores  bool     `json:"raw_scores"`
			ReturnText bool     `json:"return_text"`
		}
		if err := decodeJSON("rerank", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("rerank: query: required")
		}
		query, passages, rawScores, returnText = *b.Query, b.Texts, b.RawScores, b.ReturnText
	case apiCohereRerank:
		var b struct {
			Query     *string           `json:"query"`
			Documents []json.RawMessage `json:"documents"`
			TopN      json.Number       `json:"top_n"`
		}
		if err := decodeJSON("v2/rerank", body, &b); err != nil {
			return nil, err
		}
		if b.Query == nil {
			return nil, badf("v2/rerank: query: required")
		}
		query = *b.Query
		for i, d := range b.Documents {
			var t string
			if json.Unmarshal(d, &t) != nil {
				var obj struct {
					Text *string `json:"text"`
				}
				if json.Unmarshal(d, &obj) != nil || obj.Text == nil {
					return nil, badf("v2/rerank: documents[%d]: want a string or {\"text\": ...}", i)
				}
				t = *obj.Text
			}
			passages = append(passages, t)
		}
		var err error
		if topN, err = optInt(b.TopN, "v2/rerank: top_n", 1); err != nil {
			return nil, err
		}
	}
	if len(passages) == 0 || len(passages) > maxPassages {
		return nil, badf("%s: want 1 to %d passages, got %d", apiNames[api], maxPassages, len(passages))
	}
	tokens := s.opts.Tokenizer.Count(query)
	for _, p := range passages {
		tokens += s.opts.Tokenizer.Count(p)
	}
	res := s.rank(query, passages)
	var out []byte
	switch api {
	case apiNIMRankings:
		out = append(out, `{"rankings":[`...)
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			out = append(out, `,"logit":`...)
			out = strconv.AppendFloat(out, r.logit, 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, `]}`...)
	case apiTEIRerank:
		out = append(out, '[')
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			if returnText {
				out = append(out, `,"text":`...)
				out = jsonwire.AppendString(out, passages[r.index])
			}
			out = append(out, `,"score":`...)
			score := sigmoid(r.logit)
			if rawScores {
				score = r.logit
			}
			out = strconv.AppendFloat(out, score, 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, ']')
	case apiCohereRerank:
		if topN > 0 && topN < len(res) {
			res = res[:topN]
		}
		out = append(out, `{"id":"`...)
		out = appendHex(out, mix(s.opts.Seed, fnv64a(body), saltID))
		out = append(out, `","results":[`...)
		for i, r := range res {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"index":`...)
			out = strconv.AppendInt(out, int64(r.index), 10)
			out = append(out, `,"relevance_score":`...)
			out = strconv.AppendFloat(out, sigmoid(r.logit), 'g', 8, 64)
			out = append(out, '}')
		}
		out = append(out, `],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1},"tokens":{"input_tokens":`...)
		out = strconv.AppendInt(out, int64(tokens), 10)
		out = append(out, `,"output_tokens":0}}}`...)
	}
	return &prerendered{body: out, tokens: tokens}, nil
}
