package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"time_to_first_token", "time_to_second_token", "request_latency", "inter_token_latency"}
	for _, c := range []struct{ in, want string }{
		{"time_to_frist_token", "time_to_first_token"},
		{"request_latncy", "request_latency"},
		{"ttft", ""},                                   // too far from every name
		{"time_to_first_token", "time_to_first_token"}, // exact
		{"", ""},
	} {
		if got := Nearest(c.in, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Ties go to the first name in sorted order, whatever the input order.
	if a, b := Nearest("ab", []string{"ac", "aa"}), Nearest("ab", []string{"aa", "ac"}); a != "aa" || b != "aa" {
		t.Errorf("ties: %q, %q; want aa both times", a, b)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
