package plan

import (
	"strings"
	"testing"
)

// defaultsSet is a FlagSet that only puts each default in place, as pflag does.
type defaultsSet struct{ names []string }

func (s *defaultsSet) BoolVarP(p *bool, n, _ string, v bool, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) IntVarP(p *int, n, _ string, v int, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) Int64VarP(p *int64, n, _ string, v int64, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) Uint64VarP(p *uint64, n, _ string, v uint64, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) Float64VarP(p *float64, n, _ string, v float64, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) StringVarP(p *string, n, _ string, v string, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) StringArrayVarP(p *[]string, n, _ string, v []string, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) IntSliceVarP(p *[]int, n, _ string, v []int, _ string) {
	*p = v
	s.names = append(s.names, n)
}
func (s *defaultsSet) Float64SliceVarP(p *[]float64, n, _ string, v []float64, _ string) {
	*p = v
	s.names = append(s.names, n)
}

func newTestFlags() (*Flags, *defaultsSet) {
	f, s := NewFlags(), &defaultsSet{}
	f.DefineFlags(s)
	return f, s
}

// Every media flag (image-, audio-, video-) is marked as one (so a text plan's spec misses
// none), every flag marked is one, and a text plan's spec holds none of them.
func TestMediaFlagNames(t *testing.T) {
	f, _ := newTestFlags()
	isMedia := func(n string) bool {
		return strings.HasPrefix(n, "image-") || strings.HasPrefix(n, "audio-") || strings.HasPrefix(n, "video-")
	}
	count := 0
	for _, fd := range f.fields {
		if fd.media != isMedia(fd.name) {
			t.Errorf("media flag %s: marked %v", fd.name, fd.media)
		}
		if fd.media {
			count++
		}
	}
	if count != 23 {
		t.Errorf("%d media flags, want 23", count)
	}
	o := f.O
	for n := range f.Spec(&o) {
		if isMedia(n) {
			t.Errorf("text plan spec keeps %s", n)
		}
	}
	o.Media.Image.WidthMean, o.Media.Image.HeightMean = 10, 10
	n := 0
	for k := range f.Spec(&o) {
		if isMedia(k) {
			n++
		}
	}
	if !o.Media.Enabled() || n != count {
		t.Errorf("a media plan's spec holds %d media flags, want %d", n, count)
	}
}

// Every name in laterFlags is a plan flag (a misspelt one would stay in every spec), and
// Spec leaves a flag out at its default and keeps it when it is set elsewhere.
func TestLaterFlags(t *testing.T) {
	f, s := newTestFlags()
	defined := map[string]bool{}
	for _, n := range s.names {
		defined[n] = true
	}
	for n := range laterFlags {
		if !defined[n] {
			t.Errorf("%s is not a plan flag", n)
		}
	}
	o := f.O
	sp := f.Spec(&o)
	for n := range laterFlags {
		if _, ok := sp[n]; ok {
			t.Errorf("a default plan's spec keeps %s", n)
		}
	}
	f, _ = newTestFlags()
	f.O.CacheBust, f.O.TrajectoryStartMaxRatio, f.O.PrefillConcurrency = "first_turn_prefix", 1, 2
	o = f.O
	sp = f.Spec(&o)
	for _, n := range []string{"cache-bust", "trajectory-start-max-ratio", "prefill-concurrency"} {
		if _, ok := sp[n]; !ok {
			t.Errorf("the spec lost %s, which was set", n)
		}
	}
	if _, ok := sp["trajectory-start-min-ratio"]; ok {
		t.Error("the spec keeps trajectory-start-min-ratio at its default")
	}
}
