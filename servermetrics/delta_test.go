package servermetrics

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
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

// sorted is a copy of s in a fixed order (expfmt's text decoder gives families in its map's).
func sorted(s []Sample) []Sample {
	out := slices.Clone(s)
	slices.SortFunc(out, func(a, b Sample) int {
		return strings.Compare(fmt.Sprint(a.Name, a.Labels), fmt.Sprint(b.Name, b.Labels))
	})
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
