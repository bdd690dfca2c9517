package servermetrics

import (
	"bytes"
	"strings"
)

// A metrics page is outside bytes: a server (or anything at the URL) may serve 50,000
// series, a page of 30 MB, or one that never ends. The scraper reads at most MaxPageBytes
// of a page and hands expfmt at most MaxSeries sample lines of it, whole families only (a
// histogram cut between its buckets and its _count would be a wrong histogram): the
// families of the stable-name table (Lookup) and the DCGM fields first, then the others in
// page order while they fit. What parsing costs is then bounded by the caps, not by the
// page.

// DefaultMaxSeries is the most series the scraper records of one endpoint: sample lines
// kept of one page, and series in server_metrics.jsonl over the run. Servers expose a few
// hundred to a few thousand (vLLM, SGLang, a DCGM exporter of 8 GPUs).
const DefaultMaxSeries = 10000

// pageStats says what selectFamilies kept of a page.
type pageStats struct {
	lines, kept       int      // sample lines of the page, and of them kept
	families, dropped int      // families of the page (as far as counted), and of them dropped
	knownDropped      []string // known families dropped (they did not fit the cap), in page order
	cut               bool     // the page was cut at the byte cap: its last family was dropped
}

// capped reports whether anything was left out.
func (s *pageStats) capped() bool { return s.kept < s.lines || s.cut }

// knownFamily reports whether a family is one analyze reports on: in the stable-name table
// (a histogram's or summary's _bucket, _sum and _count lines exposed without a TYPE line
// included) or a DCGM field.
func knownFamily(name string) bool {
	if _, _, ok := Lookup(name); ok || isDCGMField(name) {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if _, _, ok := Lookup(base); ok {
				return true
			}
		}
	}
	return false
}

func isDCGMField(name string) bool {
	for i := range DCGMFields {
		if DCGMFields[i].Name == name {
			return true
		}
	}
	return false
}

// familySuffixes are the sample-name suffixes a family's lines may carry (Prometheus text
// and OpenMetrics).
var familySuffixes = [][]byte{[]byte("_bucket"), []byte("_sum"), []byte("_count"), []byte("_total"),
	[]byte("_created"), []byte("_gsum"), []byte("_gcount"), []byte("_info")}

// pageLine is one line of a page as the selection sees it.
type pageLine struct {
	line   []byte // without its newline
	family []byte // the family it belongs to; nil for a line of no family
	sample bool   // a sample line (else a TYPE, HELP or UNIT line of family)
	eof    bool   // OpenMetrics "# EOF"
}

// lineScanner walks a page's lines, following which family each belongs to.
type lineScanner struct {
	rest []byte
	cur  []byte // the family of the last TYPE/HELP/UNIT line
}

// next returns the next line; ok is false at the end. Lines that matter to no family
// (blank lines, other comments) come back with a nil family.
func (s *lineScanner) next() (l pageLine, ok bool) {
	if len(s.rest) == 0 {
		return l, false
	}
	i := bytes.IndexByte(s.rest, '\n')
	if i < 0 {
		l.line, s.rest = s.rest, nil
	} else {
		l.line, s.rest = s.rest[:i], s.rest[i+1:]
	}
	t := bytes.TrimLeft(l.line, " \t")
	if len(t) == 0 {
		return l, true
	}
	if t[0] == '#' {
		word, rest := nextField(t[1:])
		name, _ := nextField(rest)
		if string(word) == "EOF" && len(name) == 0 {
			l.eof = true
			return l, true
		}
		if len(name) > 0 && (string(word) == "TYPE" || string(word) == "HELP" || string(word) == "UNIT") {
			s.cur = name
			l.family = name
		}
		return l, true
	}
	l.sample = true
	name := t
	if j := bytes.IndexAny(t, "{ \t"); j >= 0 {
		name = t[:j]
	}
	l.family = name
	if len(s.cur) > 0 && bytes.HasPrefix(name, s.cur) {
		if rest := name[len(s.cur):]; len(rest) == 0 || hasFamilySuffix(rest) {
			l.family = s.cur
		}
	}
	return l, true
}

// nextField returns b's first field (as bytes.Fields splits, without allocating) and what
// follows it.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

func hasFamilySuffix(b []byte) bool {
	for _, s := range familySuffixes {
		if bytes.Equal(b, s) {
			return true
		}
	}
	return false
}

// selectFamilies returns the part of page that is parsed: page itself when it has at most
// maxSeries sample lines and was not cut, else its lines of whole families within
// maxSeries sample lines (known families first, then the others in page order), appended
// to dst. cut says page ends where the byte cap cut it: its last family is dropped, since
// its lines may go on past the cut.
func selectFamilies(dst, page []byte, maxSeries int, cut bool) ([]byte, pageStats) {
	var st pageStats
	// Pass 1: the sample lines of the page, of each known family, and the family the page
	// ends in.
	type knownSpan struct {
		name  string
		lines int
	}
	var known []knownSpan
	knownAt := map[string]int{}
	var prev []byte
	prevKnown := -1
	var last []byte
	sc := lineScanner{rest: page}
	for {
		l, ok := sc.next()
		if !ok {
			break
		}
		if l.family == nil {
			continue
		}
		last = l.family
		if !bytes.Equal(l.family, prev) {
			prev = l.family
			prevKnown = -1
			if name := string(l.family); knownFamily(name) {
				i, seen := knownAt[name]
				if !seen {
					i = len(known)
					knownAt[name] = i
					known = append(known, knownSpan{name: name})
				}
				prevKnown = i
			}
		}
		if l.sample {
			st.lines++
			if prevKnown >= 0 {
				known[prevKnown].lines++
			}
		}
	}
	if st.lines <= maxSeries && !cut {
		st.kept = st.lines
		return page, st
	}
	lastName := string(last)
	st.cut = cut
	// Known families go in whole, in page order, while they fit.
	admitted := make(map[string]bool, len(known))
	budget := maxSeries
	for _, k := range known {
		if cut && k.name == lastName {
			continue
		}
		if k.lines <= budget {
			admitted[k.name] = true
			budget -= k.lines
		} else {
			st.knownDropped = append(st.knownDropped, k.name)
		}
	}
	// Pass 2: copy the lines of admitted known families, and of other families while they
	// fit: each family's lines go out as they come and are taken back if it outgrows the
	// budget. Only known families are remembered, so a page of a million one-line families
	// costs no map of them.
	var span struct {
		family   []byte
		start    int // where the family's lines begin in dst
		lines    int
		known    bool
		rejected bool
	}
	endSpan := func() {
		if span.family == nil || span.known {
			return
		}
		st.families++
		if span.rejected || cut && bytes.Equal(span.family, last) {
			dst = dst[:span.start]
			st.dropped++
			return
		}
		budget -= span.lines
		st.kept += span.lines
	}
	sc = lineScanner{rest: page}
	for {
		l, ok := sc.next()
		if !ok {
			break
		}
		if l.eof {
			endSpan()
			span.family = nil
			dst = append(append(dst, l.line...), '\n')
			continue
		}
		if l.family == nil {
			continue
		}
		if !bytes.Equal(l.family, span.family) {
			endSpan()
			span.family, span.start, span.lines, span.rejected = l.family, len(dst), 0, false
			_, span.known = knownAt[string(l.family)]
			if span.known {
				span.rejected = !admitted[string(l.family)]
				st.families++
				if span.rejected {
					st.dropped++
				}
			}
		}
		if span.rejected && span.known {
			continue
		}
		if l.sample {
			span.lines++
			if span.known {
				st.kept++
			} else if span.lines > budget {
				span.rejected = true
			}
		}
		if !span.rejected {
			dst = append(append(dst, l.line...), '\n')
		}
	}
	endSpan()
	return dst, st
}
