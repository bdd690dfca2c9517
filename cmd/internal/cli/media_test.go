package cli

import "testing"

// Every flag addMediaFlags defines is in mediaFlagNames (so dropMediaSpec misses none),
// and a text plan's spec holds none of them.
func TestMediaFlagNames(t *testing.T) {
	p := NewPlan()
	names := map[string]bool{}
	for _, n := range mediaFlagNames {
		if p.FS.Lookup(n) == nil {
			t.Errorf("%s is not a plan flag", n)
		}
		names[n] = true
	}
	count := 0
	s := spec(p.FS)
	for n := range s {
		if len(n) > 6 && (n[:6] == "image-" || n[:6] == "audio-" || n[:6] == "video-") {
			count++
			if !names[n] {
				t.Errorf("media flag %s is missing from mediaFlagNames", n)
			}
		}
	}
	if count != len(mediaFlagNames) {
		t.Errorf("%d media flags in the spec, %d names", count, len(mediaFlagNames))
	}
	dropMediaSpec(s, &p.O.Media)
	for _, n := range mediaFlagNames {
		if _, ok := s[n]; ok {
			t.Errorf("text plan spec keeps %s", n)
		}
	}
}
