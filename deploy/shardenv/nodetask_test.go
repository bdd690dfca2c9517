package shardenv

import "testing"

func FuzzParseTasksPerNode(f *testing.F) {
	for _, s := range []string{"2", "2(x3),1", "1(x1048576)", "0", "(x2)", "3(x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		counts, err := parseTasksPerNode(s)
		if err != nil {
			return
		}
		if len(counts) == 0 || len(counts) > 1<<20 {
			t.Fatalf("%q: %d nodes", s, len(counts))
		}
		for _, c := range counts {
			if c < 1 {
				t.Fatalf("%q: a node of %d tasks", s, c)
			}
		}
	})
}
