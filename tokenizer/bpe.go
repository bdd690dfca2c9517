package tokenizer

// This file is the BPE model: merging the bytes of one pre-tokenized piece into token ids.
// It follows HuggingFace's Word::merge_all exactly (a priority queue of candidate merges
// ordered by rank then position, stale entries skipped), so the result is the same even for
// vocabularies where two merges produce the same token; it runs in O(n log n) for an n-byte
// piece, so a 20 KB unbroken word costs about a millisecond rather than seconds.

// mergeTable maps a pair of token ids to the merge's rank and resulting id: open addressing
// with linear probing over a power-of-two table at most half full, so a lookup is a
// multiply, a shift and usually one probe.
type mergeTable struct {
	keys  []uint64 // left<<32 | right; emptyKey when free
	vals  []uint64 // rank<<32 | new id
	shift uint
}

const emptyKey = ^uint64(0)

func newMergeTable(n int) *mergeTable {
	size, bits := 16, uint(4)
	for size < 2*n {
		size <<= 1
		bits++
	}
	m := &mergeTable{keys: make([]uint64, size), vals: make([]uint64, size), shift: 64 - bits}
	for i := range m.keys {
		m.keys[i] = emptyKey
	}
	return m
}

func (m *mergeTable) slot(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> m.shift
}

// put sets the merge of (a, b); a later merge of the same pair replaces an earlier one, as
// when HuggingFace collects its merge list into a map.
func (m *mergeTable) put(a, b, rank, id int32) {
	key := uint64(uint32(a))<<32 | uint64(uint32(b))
	mask := uint64(len(m.keys) - 1)
	for i := m.slot(key); ; i = (i + 1) & mask {
		if m.keys[i] == emptyKey || m.keys[i] == key {
			m.keys[i] = key
			m.vals[i] = uint64(uint32(rank))<<32 | uint64(uint32(id))
			return
		}
	}
}

// get returns the rank and new id of merging a then b.
func (m *mergeTable) get(a, b int32) (rank, id int32, ok bool) {
	key := uint64(uint32(a))<<32 | uint64(uint32(b))
	mask := uint64(len(m.keys) - 1)
	for i := m.slot(key); ; i = (i + 1) & mask {
		switch m.keys[i] {
		case key:
			v := m.vals[i]
			return int32(v >> 32), int32(uint32(v)), true
		case emptyKey:
			return 0, 0, false
		}
	}
}

// bpeModel holds what merging needs.
type bpeModel struct {
	byteIDs      [256][]int32 // initial symbols of each byte (usually one id; none if unknown)
	byteFallback [256]bool    // byteIDs[b] are <0xXX> byte-fallback tokens, not the byte's own token
	merges       *mergeTable
	ignoreMerges bool             // a piece that is a whole vocabulary token is kept whole
	rawVocab     map[string]int32 // raw bytes of each vocabulary token, for ignoreMerges
	unk          int32            // id for bytes without a token, or -1 to drop them
	fuseUnk      bool
}

// symbol is one element of a piece being merged: a doubly linked list over the initial
// positions, as in HuggingFace's Word. Twelve bytes, for a piece may be megabytes long
// (one word of a huge input line): merging takes about 24 bytes per byte of the piece.
type symbol struct {
	id         int32 // goneID once merged into its left neighbour
	prev, next int32 // -1 at the ends
}

// goneID marks a symbol merged into its left neighbour (vocabulary ids are not negative).
const goneID = -1

// mergeItem is a candidate merge of the symbol at pos with its right neighbour.
type mergeItem struct {
	rank, pos, id int32
}

func (a mergeItem) less(b mergeItem) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

// mergeHeap is a binary min-heap of candidate merges, kept by the encoder for reuse.
type mergeHeap []mergeItem

func (h *mergeHeap) push(it mergeItem) {
	*h = append(*h, it)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].less(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeItem {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q) && q[l].less(q[m]) {
			m = l
		}
		if r < len(q) && q[r].less(q[m]) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// bpeScratch is the per-encoder working memory for merging.
type bpeScratch struct {
	syms []symbol
	heap mergeHeap
	// pops counts the merge candidates the last appendWord took from the heap: at most the
	// pairs it started with plus two per merge, so linear in the word (tests hold it there).
	pops int
}

// appendWord appends the ids of one piece (raw bytes) to dst.
func (m *bpeModel) appendWord(dst []int, word string, sc *bpeScratch) []int {
	if m.ignoreMerges {
		if id, ok := m.rawVocab[word]; ok {
			return append(dst, int(id))
		}
	}
	// Initial symbols, with HuggingFace's handling of bytes that have no token: byte
	// fallback tokens when the vocabulary has them, else the unknown token, held back so
	// that runs of unknowns can fuse (and, as there, not flushed by fallback tokens).
	syms := sc.syms[:0]
	if cap(syms) < len(word) {
		syms = make([]symbol, 0, len(word)) // at most one symbol per byte but for fallbacks
	}
	pendingUnk := false
	for i := 0; i < len(word); i++ {
		b := word[i]
		ids := m.byteIDs[b]
		switch {
		case len(ids) > 0 && !m.byteFallback[b]:
			if pendingUnk {
				syms = append(syms, symbol{id: m.unk})
				pendingUnk = false
			}
			syms = append(syms, symbol{id: ids[0]})
		case len(ids) > 0:
			for _, id := range ids {
				syms = append(syms, symbol{id: id})
			}
		case m.unk >= 0:
			if pendingUnk && !m.fuseUnk {
				syms = append(syms, symbol{id: m.unk})
			}
			pendingUnk = true
		}
	}
	if pendingUnk {
		syms = append(syms, symbol{id: m.unk})
	}
	if len(syms) == 0 {
		sc.syms = syms
		return dst
	}
	for i := range syms {
		syms[i].prev, syms[i].next = int32(i-1), int32(i+1)
	}
	syms[len(syms)-1].next = -1

	h := sc.heap[:0]
	if cap(h) < len(syms) {
		h = make(mergeHeap, 0, len(syms)) // the pairs; merges push and pop about evenly
	}
	sc.pops = 0
	for i := 0; i+1 < len(syms); i++ {
		if rank, id, ok := m.merges.get(syms[i].id, syms[i+1].id); ok {
			h.push(mergeItem{rank: rank, pos: int32(i), id: id})
		}
	}
	for len(h) > 0 {
		top := h.pop()
		sc.pops++
		cur := &syms[top.pos]
		if cur.id == goneID || cur.next < 0 {
			continue
		}
		right := &syms[cur.next]
		// Skip entries made stale by an earlier merge of either symbol.
		if _, id, ok := m.merges.get(cur.id, right.id); !ok || id != top.id {
			continue
		}
		cur.id = top.id
		right.id = goneID
		cur.next = right.next
		if cur.next >= 0 {
			syms[cur.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if rank, id, ok := m.merges.get(syms[cur.prev].id, cur.id); ok {
				h.push(mergeItem{rank: rank, pos: cur.prev, id: id})
			}
		}
		if cur.next >= 0 {
			if rank, id, ok := m.merges.get(cur.id, syms[cur.next].id); ok {
				h.push(mergeItem{rank: rank, pos: top.pos, id: id})
			}
		}
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		dst = append(dst, int(syms[i].id))
	}
	sc.syms, sc.heap = syms, h
	return dst
}
