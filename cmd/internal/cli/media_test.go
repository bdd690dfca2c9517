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

// Every name in laterFlags is a plan flag (a misspelt one would stay in every spec), and
// dropLaterSpec leaves a flag out at its default and keeps it when it is set elsewhere.
func TestLaterFlags(t *testing.T) {
	p := NewPlan()
	for _, n := range laterFlags {
		if p.FS.Lookup(n) == nil {
			t.Errorf("%s is not a plan flag", n)
		}
	}
	s := spec(p.FS)
	dropLaterSpec(s, p.FS)
	for _, n := range laterFlags {
		if _, ok := s[n]; ok {
			t.Errorf("a default plan's spec keeps %s", n)
		}
	}
	p = NewPlan()
	if err := p.FS.Parse([]string{"--cache-bust", "first_turn_prefix", "--trajectory-start-max-ratio", "1", "--prefill-concurrency", "2"}); err != nil {
		t.Fatal(err)
	}
	s = spec(p.FS)
	dropLaterSpec(s, p.FS)
	for _, n := range []string{"cache-bust", "trajectory-start-max-ratio", "prefill-concurrency"} {
		if _, ok := s[n]; !ok {
			t.Errorf("the spec lost %s, which was set", n)
		}
	}
	if _, ok := s["trajectory-start-min-ratio"]; ok {
		t.Error("the spec keeps trajectory-start-min-ratio at its default")
	}
}
