package plan

import (
	"strings"
	"testing"
)

// TestLargePlanNotice: a plan estimated over LargePlanBytes is reported, with its size and
// what dominates it, before it is written; a small one says nothing. The README's
// multimodal example wrote 222 MB (1.1 GB with a body per request) without a word.
func TestLargePlanNotice(t *testing.T) {
	tests := []struct {
		name string
		set  func(o *Options)
		want string // "" : no notice
	}{
		{"small", func(o *Options) { o.RequestCount = 20 }, ""},
		{"media", func(o *Options) {
			o.RequestCount = 500
			o.Media.Image.WidthMean, o.Media.Image.HeightMean, o.Media.Image.BatchSize = 512, 512, 2
		}, "media dominate"},
		{"text", func(o *Options) { o.RequestCount, o.ISLMean = 20000, 2000 }, "the request bodies' text dominates"},
		{"records", func(o *Options) { o.RequestCount, o.NumDatasetEntries = 2000000, 10 }, "the records dominate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.NumDatasetEntries = 0
			tt.set(&o)
			var got []string
			o.Notice = func(m string) { got = append(got, m) }
			o.noticeSize(o.estimate(nil))
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("notice %q for a small plan", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.Contains(got[0], "this plan will take about ")):
				t.Errorf("notices %q, want one naming its size and %q", got, tt.want)
			}
		})
	}
	// Compile passes Notice nothing for a small plan.
	o := testOptions(t)
	o.RequestCount = 4
	o.Notice = func(m string) { t.Errorf("a 4-request plan was reported large: %s", m) }
	if _, err := Compile(o); err != nil {
		t.Fatal(err)
	}
}
