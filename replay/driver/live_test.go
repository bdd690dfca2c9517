package driver

import (
	"testing"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

func TestJSONEscapeAndSplice(t *testing.T) {
	got := jsonwire.AppendStringBody(nil, []byte("a\"b\\c\nd\x01\xffé\u2028\b\f"))
	if want := `a\"b\\c\nd\u0001\ufffdé\u2028\b\f`; string(got) != want {
		t.Fatalf("escape: %s want %s", got, want)
	}
	l := Live{marker: []byte("@@")}
	hist := [][]byte{[]byte("one"), []byte("two"), []byte("thr\"ee")}
	for _, c := range []struct {
		body      string
		firstTurn uint32
		want      string
	}{
		{`{"a":"@@"}`, 0, `{"a":"one"}`},
		{`["@@","@@","@@"]`, 0, `["one","two","thr\"ee"]`},
		{`["@@","@@","@@","@@"]`, 1, `["","one","two","thr\"ee"]`},
		{`no marker`, 0, `no marker`},
		{`@@@@@@@@`, 0, `onetwothr\"ee`},
	} {
		if got := l.splice(nil, []byte(c.body), hist, c.firstTurn); string(got) != c.want {
			t.Errorf("%s: got %s want %s", c.body, got, c.want)
		}
	}
}
