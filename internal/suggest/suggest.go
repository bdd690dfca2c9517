// Package suggest finds the known name nearest to a misspelled one, for the "did you mean"
// of every command's error lines (flags, gate metrics, statistics).
package suggest

import "sort"

// Nearest returns the name of names nearest to name by edit distance, or "" when none is
// near: more than a third of name's letters (at least 2) would have to change. Ties go to
// the name that sorts first, so the answer does not depend on the order of names.
func Nearest(name string, names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	best, bestD := "", max(2, len(name)/3)+1
	for _, n := range sorted {
		if n == "" {
			continue
		}
		if d := Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
