package replay

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		sent, done, errs, total int64
		duration, elapsed       time.Duration
		want                    string
	}{
		{0, 0, 0, 100, 0, -150 * time.Millisecond, "replay: starting in 150ms"},
		{0, 0, 0, 100, 0, 0, "replay: sent 0/100  done 0  errors 0  0.0 req/s  00:00 elapsed  ETA --:--"},
		{60, 50, 2, 100, 0, 10 * time.Second, "replay: sent 60/100  done 50  errors 2  5.0 req/s  00:10 elapsed  ETA 00:10"},
		{5000, 3600, 0, 7200, 0, time.Hour,
			"replay: sent 5000/7200  done 3600  errors 0  1.0 req/s  1:00:00 elapsed  ETA 1:00:00"},
		// sized by duration: a 60 s run of a plan of 3.84 M requests
		{28, 25, 0, 3840000, time.Minute, 10 * time.Second,
			"replay: sent 28  done 25  errors 0  2.5 req/s  00:10 elapsed  ETA 00:50 (duration 01:00)"},
		{1500, 1490, 0, 3840000, time.Minute, 61 * time.Second,
			"replay: sent 1500  done 1490  errors 0  24.4 req/s  01:01 elapsed  ETA 00:00 (duration 01:00)"},
		{0, 0, 0, 3840000, time.Minute, -time.Second,
			"replay: starting in 1s"},
	} {
		if got := progressLine(c.sent, c.done, c.errs, c.total, c.duration, c.elapsed); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// progressLog matches one line of the progress log (off a terminal): whole lines only.
var progressLog = regexp.MustCompile(`^replay: (starting in \S+|sent (\d+)/20  done \d+  errors 0  \d+\.\d req/s  \d\d:\d\d elapsed  ETA \S+)$`)

// Off a terminal (ProgressEvery set) the progress is a log of whole lines, one per period,
// with no carriage returns or escapes, sent never going back; on a terminal it is one line
// rewritten in place and cleared at the end.
func TestProgressOutput(t *testing.T) {
	srv := newTestServer(t)
	plan := singleTurn(20, job{N: 1, Stream: true}, func(i int) int64 { return int64(i) * 40e6 }).write(t, t.TempDir())
	for _, every := range []time.Duration{20 * time.Millisecond, 0} {
		o := testOptions(t, plan, srv.URL)
		var out bytes.Buffer
		o.Progress, o.ProgressEvery = &out, every
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := r.Run(); err != nil || m.Counts.Completed != 20 {
			t.Fatalf("every %v: %v, counts %+v", every, err, m.Counts)
		}
		s := out.String()
		if every == 0 {
			// The 760 ms schedule spans at least one 250 ms tick.
			if !strings.HasPrefix(s, "\rreplay: ") || !strings.HasSuffix(s, "\r\033[K") || strings.Contains(s, "\n") {
				t.Fatalf("in place: %q", s)
			}
			continue
		}
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		if s == "" || !strings.HasSuffix(s, "\n") || strings.ContainsAny(s, "\r\033") {
			t.Fatalf("log: %q", s)
		}
		last := -1
		for _, l := range lines {
			m := progressLog.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("log line %q", l)
			}
			if m[2] == "" {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			if n < last {
				t.Fatalf("sent went back from %d in %q", last, s)
			}
			last = n
		}
	}
}
