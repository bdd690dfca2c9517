package mockllm

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// The simulated prefix cache: what a server with automatic prefix caching (vLLM's) would
// hit, so that a benchmark of a workload built for KV-cache reuse (agentic traces, shared
// prefixes) can compare the reuse it offered with the server's own hit counters
// (vllm:prefix_cache_queries / vllm:prefix_cache_hits, in tokens). A prompt's tokens, as the
// mock counts them, are cut in blocks of PrefixBlockTokens; a block is known by the hash of
// every token up to its end, so a block hits only when the whole prefix before it matches; a
// request hits its leading cached blocks, then caches all its full blocks, the least recently
// used ones evicted past the capacity (KVCacheTokens). The cache does not change timing.

// PrefixBlockTokens is the simulated prefix cache's block size (vLLM's default).
const PrefixBlockTokens = 16

type prefixCache struct {
	mu       sync.Mutex
	capacity int // blocks
	lru      *list.List
	blocks   map[uint64]*list.Element

	queries, hits atomic.Uint64 // tokens
}

func newPrefixCache(capacityTokens int) *prefixCache {
	return &prefixCache{capacity: max(capacityTokens/PrefixBlockTokens, 1), lru: list.New(), blocks: map[uint64]*list.Element{}}
}

// add counts one prompt of token ids: its leading cached blocks are hits. It returns the
// tokens hit.
func (c *prefixCache) add(ids []int) int {
	c.queries.Add(uint64(len(ids)))
	h := uint64(14695981039346656037)
	hit, hitting := 0, true
	c.mu.Lock()
	for end := PrefixBlockTokens; end <= len(ids); end += PrefixBlockTokens {
		for _, id := range ids[end-PrefixBlockTokens : end] {
			h = (h ^ uint64(id)) * 1099511628211
		}
		if e, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(e)
			if hitting {
				hit += PrefixBlockTokens
			}
			continue
		}
		hitting = false
		c.blocks[h] = c.lru.PushFront(h)
		if c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.blocks, old.Value.(uint64))
		}
	}
	c.mu.Unlock()
	c.hits.Add(uint64(hit))
	return hit
}
