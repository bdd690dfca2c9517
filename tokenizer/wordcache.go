package tokenizer

import "hash/maphash"

// wordCache maps pre-tokenized pieces to their ids: text repeats its words, so most
// pieces are merged once and then looked up. It is an open-addressing table of 16-byte
// slots over two arenas (key bytes and ids), so a lookup touches one slot and one key and
// inserting allocates nothing once the arenas have grown. When full it starts afresh:
// crude, but cheap, and the hot words come back at once.
type wordCache struct {
	slots []cacheSlot // power-of-two length, at most half full
	keys  []byte
	ids   []int32
	n     int
	limit int
}

type cacheSlot struct {
	hash uint32 // 0: empty
	koff uint32 // key bytes: keys[koff : koff+klen]
	ioff uint32 // ids: ids[ioff : ioff+nids]
	klen uint8
	nids uint8
}

func newWordCache(limit int) *wordCache {
	return &wordCache{slots: make([]cacheSlot, 1024), limit: limit}
}

// hash returns the 32 bits stored in a slot (never 0) and the bits that pick the slot.
func (c *wordCache) hash(w string) (h uint32, idx uint32) {
	v := maphash.String(wordSeed, w)
	return uint32(v) | 1, uint32(v >> 32)
}

// wordSeed is shared by all caches; per-process randomness is all the table needs.
var wordSeed = maphash.MakeSeed()

// get returns the cached ids of w.
func (c *wordCache) get(w string) ([]int32, bool) {
	h, i := c.hash(w)
	mask := uint32(len(c.slots) - 1)
	for i &= mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.hash == 0 {
			return nil, false
		}
		if s.hash == h && int(s.klen) == len(w) && string(c.keys[s.koff:s.koff+uint32(s.klen)]) == w {
			return c.ids[s.ioff : s.ioff+uint32(s.nids)], true
		}
	}
}

// put caches the ids of w, which must not be cached yet. Words longer than 255 bytes or
// with more than 255 ids are not cached.
func (c *wordCache) put(w string, ids []int) {
	if len(w) > 255 || len(ids) > 255 {
		return
	}
	if c.n >= c.limit {
		clear(c.slots)
		c.keys, c.ids, c.n = c.keys[:0], c.ids[:0], 0
	}
	if 2*(c.n+1) > len(c.slots) {
		c.grow()
	}
	h, i := c.hash(w)
	s := cacheSlot{hash: h, koff: uint32(len(c.keys)), ioff: uint32(len(c.ids)), klen: uint8(len(w)), nids: uint8(len(ids))}
	c.keys = append(c.keys, w...)
	for _, id := range ids {
		c.ids = append(c.ids, int32(id))
	}
	c.insert(s, i)
	c.n++
}

func (c *wordCache) insert(s cacheSlot, i uint32) {
	mask := uint32(len(c.slots) - 1)
	for i &= mask; c.slots[i].hash != 0; i = (i + 1) & mask {
	}
	c.slots[i] = s
}

// grow doubles the table, rehashing from the stored keys.
func (c *wordCache) grow() {
	old := c.slots
	c.slots = make([]cacheSlot, 2*len(old))
	for _, s := range old {
		if s.hash != 0 {
			_, i := c.hash(string(c.keys[s.koff : s.koff+uint32(s.klen)]))
			c.insert(s, i)
		}
	}
}
