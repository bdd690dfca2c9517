package servermetrics

import (
	"bytes"
	"testing"
)

// FuzzRead feeds the sample-file reader arbitrary bytes: an error or a file, never a panic.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{StartUnixNs: 1})
	w.Endpoint(EndpointInfo{ID: 0, URL: "http://h/metrics", Role: RoleServer})
	w.Scrape(0, PhaseRun, 1, 2, 3, []Sample{{Family: "g", Type: "gauge", Name: "g", V: 1}})
	f.Add(buf.Bytes())
	f.Add([]byte(`{"kind":"header","format":"llmbench-server-metrics","version":1}` + "\n" + `{"kind":"scrape","endpoint":0,"values":[["NaN",1]]}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if x, err := Read(bytes.NewReader(b)); err == nil {
			for _, s := range x.Scrapes {
				for _, v := range s.Values {
					if v.Series < 0 || v.Series >= len(x.Series) {
						t.Fatalf("series %d out of range", v.Series)
					}
				}
			}
		}
	})
}

// FuzzParse feeds the scrape parser path (expfmt, flattening, DCGM mapping) arbitrary pages.
func FuzzParse(f *testing.F) {
	f.Add([]byte(vllmPage), "text/plain; version=0.0.4")
	f.Add([]byte(openMetricsPage), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte(`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="x"} 5`), "")
	f.Fuzz(func(t *testing.T, b []byte, ctype string) {
		s, err := Parse(b, ctype)
		if err != nil {
			return
		}
		DCGMSamples(s, 0)
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, Header{})
		w.Endpoint(EndpointInfo{})
		if err := w.Scrape(0, PhaseRun, 0, 0, 0, s); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&buf); err != nil {
			t.Fatalf("a parsed page does not read back: %v", err)
		}
	})
}

// FuzzSelectFamilies feeds the page selection (the series and byte caps) arbitrary pages and
// caps: what it keeps is the page's own lines in order, never more sample lines than the
// cap once it applies, and it parses (or fails to) without a panic.
func FuzzSelectFamilies(f *testing.F) {
	f.Add([]byte(vllmPage), uint8(3), false)
	f.Add([]byte(openMetricsPage), uint8(1), true)
	f.Add([]byte("a 1\nb 2\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\nc 3\n"), uint8(2), false)
	f.Fuzz(func(t *testing.T, page []byte, maxSeries uint8, cut bool) {
		limit := int(maxSeries) + 1
		sel, st := selectFamilies(nil, page, limit, cut)
		if !st.capped() {
			if !bytes.Equal(sel, page) {
				t.Fatal("an uncapped page was changed")
			}
			return
		}
		if st.kept > limit {
			t.Fatalf("%d sample lines kept, cap %d", st.kept, limit)
		}
		// A subsequence of the page's lines.
		rest := page
		for _, l := range bytes.SplitAfter(sel, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			l = bytes.TrimSuffix(l, []byte("\n"))
			found := false
			for len(rest) > 0 {
				i := bytes.IndexByte(rest, '\n')
				var line []byte
				if i < 0 {
					line, rest = rest, nil
				} else {
					line, rest = rest[:i], rest[i+1:]
				}
				if bytes.Equal(line, l) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("line %q kept is not the page's, in order", l)
			}
		}
		Parse(sel, "")
	})
}
