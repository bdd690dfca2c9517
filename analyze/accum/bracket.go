package accum

// Bracket returns the indexes of the samples that enclose [lo, hi] as tightly as they
// allow: the last at or before lo (else the first) and the first at or after hi (else the
// last); at gives sample i's time, in order. ok is false with fewer than two samples or
// when the two are not in time order: a rate over them has no interval.
func Bracket(n int, at func(i int) int64, lo, hi int64) (first, last int, ok bool) {
	if n < 2 {
		return 0, 0, false
	}
	first, last = 0, n-1
	for i := range n {
		if at(i) <= lo {
			first = i
		}
	}
	for i := n - 1; i >= 0; i-- {
		if at(i) >= hi {
			last = i
		}
	}
	return first, last, at(last) > at(first)
}
