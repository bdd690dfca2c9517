package servermetrics

import (
	"bytes"
	"context"
)

// A server's page changes little from one scrape to the next: its process, config and
// idle-route families not at all, and the rest only family by family. familyCache keeps each
// family's lines and samples of the last scrape of one endpoint, so that a scrape hands expfmt
// only the families whose lines changed and reuses the samples of the others: the samples are
// what a whole parse would give, in page order, for a fraction of the work. Prometheus text
// only (an OpenMetrics page, or one whose families do not come in one run of lines each, is
// parsed whole); the cache is its endpoint's, used by one scrape at a time.
type familyCache struct {
	fams    map[string]*cachedFamily
	gen     uint64   // the scrape number: families not seen in one are forgotten
	changed []byte   // the changed families' lines, parsed together
	blocks  []block  // the page's families in page order
	out     []Sample // the page's samples, returned (valid until the next scrape)
	isKnown map[string]bool
	kept    []byte // known's result
}

// cachedFamily is one family's lines and samples at its last scrape.
type cachedFamily struct {
	raw     []byte
	samples []Sample
	gen     uint64
	fresh   bool // its lines changed in this scrape
}

// block is one family's run of lines in a page.
type block struct {
	fam *cachedFamily
}

// parse returns the samples of page (Prometheus text or OpenMetrics, by contentType), as
// parse does, parsing only the families whose lines differ from the last scrape's.
func (c *familyCache) parse(ctx context.Context, page []byte, contentType string) ([]Sample, error) {
	if isOpenMetrics(contentType) || len(page) > 0 && page[len(page)-1] != '\n' {
		// OpenMetrics, or a page cut short of its last newline (which expfmt may refuse
		// where a family of it alone would pass): whole.
		return parse(ctx, page, contentType)
	}
	if c.fams == nil {
		c.fams = map[string]*cachedFamily{}
	}
	c.gen++
	c.changed, c.blocks = c.changed[:0], c.blocks[:0]
	sc := lineScanner{rest: page}
	var cur []byte // the family of the block being read
	begin := 0     // where its lines begin in page
	split := false // a family came in two runs of lines
	endBlock := func(end int) {
		if cur == nil {
			return
		}
		raw := page[begin:end]
		f := c.fams[string(cur)]
		if f == nil {
			f = &cachedFamily{}
			c.fams[string(cur)] = f
		}
		if f.gen == c.gen {
			split = true
		}
		f.gen = c.gen
		f.fresh = !bytes.Equal(f.raw, raw)
		if f.fresh {
			f.raw = append(f.raw[:0], raw...)
			c.changed = append(c.changed, raw...)
			if len(raw) > 0 && raw[len(raw)-1] != '\n' {
				c.changed = append(c.changed, '\n')
			}
		}
		c.blocks = append(c.blocks, block{f})
	}
	for {
		at := len(page) - len(sc.rest)
		l, ok := sc.next()
		if !ok {
			break
		}
		if l.family == nil || bytes.Equal(l.family, cur) {
			continue // a blank line or another comment goes with the block around it
		}
		endBlock(at)
		if cur == nil {
			at = 0 // the lines before the first family go with it
		}
		cur, begin = l.family, at
	}
	endBlock(len(page))
	if split || len(c.blocks) == 0 {
		return c.whole(ctx, page, contentType)
	}
	if len(c.changed) > 0 {
		fresh, err := parse(ctx, c.changed, contentType)
		if err != nil {
			return c.whole(ctx, page, contentType)
		}
		for _, b := range c.blocks {
			if b.fam.fresh {
				b.fam.samples = b.fam.samples[:0]
			}
		}
		for i := range fresh {
			f := c.fams[fresh[i].Family]
			if f == nil || !f.fresh || f.gen != c.gen {
				// expfmt named the family otherwise than the lines did (samples of no
				// TYPE line): the whole page, as parse reads it.
				return c.whole(ctx, page, contentType)
			}
			f.samples = append(f.samples, fresh[i])
		}
	}
	c.out = c.out[:0]
	for _, b := range c.blocks {
		c.out = append(c.out, b.fam.samples...)
	}
	for name, f := range c.fams {
		if f.gen != c.gen {
			delete(c.fams, name)
		}
	}
	return c.out, nil
}

// whole parses page whole and forgets every family (the next scrape starts afresh).
func (c *familyCache) whole(ctx context.Context, page []byte, contentType string) ([]Sample, error) {
	c.fams = nil
	return parse(ctx, page, contentType)
}

// known returns the lines of page's known families (knownFamily), whole families, in page
// order: what a periodic scrape parses. OpenMetrics' "# EOF" is kept.
func (c *familyCache) known(page []byte) []byte {
	if c.isKnown == nil || len(c.isKnown) > 4*DefaultMaxSeries {
		c.isKnown = map[string]bool{}
	}
	c.kept = c.kept[:0]
	sc := lineScanner{rest: page}
	var cur []byte
	keep := false
	for {
		l, ok := sc.next()
		if !ok {
			break
		}
		if l.eof {
			c.kept = append(append(c.kept, l.line...), '\n')
			continue
		}
		if l.family == nil {
			continue
		}
		if !bytes.Equal(l.family, cur) {
			cur = l.family
			k, seen := c.isKnown[string(cur)]
			if !seen {
				k = knownFamily(string(cur))
				c.isKnown[string(cur)] = k
			}
			keep = k
		}
		if keep {
			c.kept = append(append(c.kept, l.line...), '\n')
		}
	}
	return c.kept
}
