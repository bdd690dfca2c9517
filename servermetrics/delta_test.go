package servermetrics

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// The family cache gives what a whole parse gives, scrape after scrape, whatever changed:
// values, families appearing and leaving, a family split in two runs of lines, samples with
// no TYPE line, a page expfmt refuses.
func TestFamilyCacheMatchesWholeParse(t *testing.T) {
	const text = "text/plain; version=0.0.4"
	pages := []string{
		"# TYPE a counter\na_total 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\ng{x=\"1\"} 5\n",
		"# TYPE a counter\na_total 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 4\nh_count 3\ng{x=\"1\"} 5\n",
		"# TYPE a counter\na_total 2\n# HELP n new\n# TYPE n gauge\nn 7\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 4\nh_count 3\n",
		"# TYPE a counter\na_total 2\n\n# a comment\nu_bucket{le=\"1\"} 1\n# TYPE n gauge\nn 7\n",
		"# TYPE a gauge\na 1\n# TYPE b gauge\nb 2\na 3\n", // a in two runs: expfmt's error, as whole
		"# TYPE a counter\na_total 2\n# TYPE n gauge\nn 8\n",
		"# TYPE a counter\na_total{x=\"1\"} 2\na_total{x=\"2\"} 3\n# TYPE n gauge\nn 8\n",
	}
	var c familyCache
	for round := range 2 {
		for i, p := range pages {
			want, werr := parse(context.Background(), []byte(p), text)
			got, gerr := c.parse(context.Background(), []byte(p), text)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("round %d page %d: error %v, whole parse's %v", round, i, gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(sorted(got), sorted(want)) {
				t.Fatalf("round %d page %d:\n got %+v\nwant %+v", round, i, got, want)
			}
		}
	}
}

// sorted is s written out in a fixed order (expfmt's text decoder gives families in its map's
// order), NaN equal to NaN.
func sorted(s []Sample) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%+v", x)
	}
	slices.Sort(out)
	return out
}

// A periodic scrape keeps the known families' lines, whole, and OpenMetrics' end.
func TestKnownFamilies(t *testing.T) {
	page := "# HELP vllm:num_requests_running r\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n" +
		"# TYPE python_gc_objects_collected_total counter\npython_gc_objects_collected_total{generation=\"0\"} 1\n" +
		"# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\nvllm:time_to_first_token_seconds_sum 1\nvllm:time_to_first_token_seconds_count 1\n# EOF\n"
	want := "# HELP vllm:num_requests_running r\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n" +
		"# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\nvllm:time_to_first_token_seconds_sum 1\nvllm:time_to_first_token_seconds_count 1\n# EOF\n"
	var c familyCache
	if got := string(c.known([]byte(page))); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// FuzzFamilyCache: over two scrapes of pages a and b, the family cache gives what a whole
// parse gives (the same samples, or an error where it errs), and its known-family filter
// keeps whole lines.
func FuzzFamilyCache(f *testing.F) {
	f.Add([]byte(vllmPage), []byte(vllmPage))
	f.Add([]byte("# TYPE a counter\na_total 1\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"),
		[]byte("# TYPE a counter\na_total 2\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"))
	f.Add([]byte("a 1\nb 2\na 3\n"), []byte("# TYPE a gauge\na 1\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		const text = "text/plain; version=0.0.4"
		var c familyCache
		for _, p := range [][]byte{a, b, a} {
			want, werr := parse(context.Background(), p, text)
			got, gerr := c.parse(context.Background(), p, text)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("error %v, whole parse's %v", gerr, werr)
			}
			if werr == nil && !reflect.DeepEqual(sorted(got), sorted(want)) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			k := c.known(p)
			if len(k) > 0 && k[len(k)-1] != '\n' {
				t.Fatalf("known families cut a line: %q", k)
			}
		}
	})
}
