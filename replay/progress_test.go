package replay

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		sent, done, errs, total int64
		elapsed                 time.Duration
		want                    string
	}{
		{0, 0, 0, 100, -150 * time.Millisecond, "replay: starting in 150ms"},
		{0, 0, 0, 100, 0, "replay: sent 0/100  done 0  errors 0  0.0 req/s  00:00 elapsed  ETA --:--"},
		{60, 50, 2, 100, 10 * time.Second, "replay: sent 60/100  done 50  errors 2  5.0 req/s  00:10 elapsed  ETA 00:10"},
		{5000, 3600, 0, 7200, time.Hour, "replay: sent 5000/7200  done 3600  errors 0  1.0 req/s  1:00:00 elapsed  ETA 1:00:00"},
	} {
		if got := progressLine(c.sent, c.done, c.errs, c.total, c.elapsed); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
