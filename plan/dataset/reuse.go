package dataset

import "hash/maphash"

// Offered prefix reuse: what the prompts a plan sends really share, computed from their
// tokens (the text of the rendered bodies), never from the ids an input gives its blocks.
// Two traces may give one hash id blocks of different sizes, or a cache-bust marker may
// change a block's text; only the tokens say what a server's prefix cache can hold.
//
// A prompt's tokens are cut into blocks of ReuseBlockTokens; a block's key hashes it with
// every token before it and with the request's scope (its model, and whatever else the server
// puts before the text: tools, media). A request reuses its leading blocks whose keys an
// earlier request sent: the tokens an infinite prefix cache of ReuseBlockTokens-token blocks
// already holds when it arrives. Plan (graph nodes' Reuse, inspect) and analyze (the prefix
// reuse note) read this one figure.

// ReuseBlockTokens is the block size of the offered prefix reuse: vLLM's default KV-cache
// block. Reuse counts whole blocks, so it never exceeds the tokens two prompts share and
// falls short of it by less than a block per request.
const ReuseBlockTokens = 16

// reuseSeed makes keys comparable across the renderer's workers (one process).
var reuseSeed = maphash.MakeSeed()

// ReuseScope returns the scope of a request: requests of different scopes share no block.
// parts are what the server puts before the prompt's text besides it (the model name, the
// tools' JSON, the media's names).
func ReuseScope(parts ...string) uint64 {
	var h maphash.Hash
	h.SetSeed(reuseSeed)
	for _, p := range parts {
		h.WriteString(p)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// AppendPromptKeys appends the scope-free keys of the whole ReuseBlockTokens-token blocks of
// a prompt of tokens ids: each hashes its block with every token before it. A loader that
// has a prompt's tokens at hand keeps them (Turn.PromptKeys) so that the renderer need not
// tokenize the prompt again.
func AppendPromptKeys(dst []uint64, ids []int) []uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for i, id := range ids {
		h = (h ^ uint64(uint32(id))) * 0x100000001b3
		if (i+1)%ReuseBlockTokens == 0 {
			h = splitmix64(h)
			dst = append(dst, h)
		}
	}
	return dst
}

// AppendReuseKeys appends the keys of prompt keys (AppendPromptKeys) in scope
// (ReuseScope): what PrefixReuse.Add takes.
func AppendReuseKeys(dst []uint64, scope uint64, keys []uint64) []uint64 {
	for _, k := range keys {
		dst = append(dst, splitmix64(k^scope))
	}
	return dst
}

// PrefixReuse counts, request by request in the order they are sent, the prompt tokens an
// infinite prefix cache already holds (the file's comment above).
type PrefixReuse struct{ seen map[uint64]struct{} }

// Add counts one request given by its block keys (AppendReuseKeys) and returns its reused
// tokens: ReuseBlockTokens for each leading key sent before.
func (p *PrefixReuse) Add(keys []uint64) int {
	if p.seen == nil {
		p.seen = make(map[uint64]struct{})
	}
	hit := 0
	for hit < len(keys) {
		if _, ok := p.seen[keys[hit]]; !ok {
			break
		}
		hit++
	}
	for _, k := range keys[hit:] {
		p.seen[k] = struct{}{}
	}
	return hit * ReuseBlockTokens
}
