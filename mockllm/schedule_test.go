package mockllm

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/lockbuf"
)

// scheduleBuf collects a server's schedule log.
type scheduleBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *scheduleBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records parses what was logged so far.
func (s *scheduleBuf) records(t testing.TB) []ScheduleRecord {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := ReadSchedule(bytes.NewReader(s.b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// last returns the one record logged since the previous call.
func (s *scheduleBuf) last(t testing.TB, seen *int) ScheduleRecord {
	t.Helper()
	recs := s.records(t)
	if len(recs) != *seen+1 {
		t.Fatalf("schedule log holds %d records, want %d", len(recs), *seen+1)
	}
	*seen++
	return recs[len(recs)-1]
}

// startLogged starts a server for o with a schedule log.
func startLogged(t testing.TB, o Options) (string, *scheduleBuf) {
	t.Helper()
	sl := &scheduleBuf{}
	o.ScheduleLog = sl
	return startServer(t, o), sl
}

// planned is TTFT + j·ITL for j < n, in nanoseconds: the schedule without jitter.
func planned(ttft, itl time.Duration, n int) []int64 {
	out := make([]int64, n)
	for j := range out {
		out[j] = int64(ttft + time.Duration(j)*itl)
	}
	return out
}

// mono converts a time read by this process to the package's monotonic clock.
func mono(at time.Time) int64 { return int64(at.Sub(monoBase)) }

// checkReceivedAfter: the client cannot read token event j before the server began writing
// it, nor before it was due. This holds however loaded the machine is.
func checkReceivedAfter(t *testing.T, rec ScheduleRecord, evs []sseEv, tokenEvents []int) {
	t.Helper()
	arrival := rec.ArrivalUnixNs - monoBase.UnixNano()
	if len(tokenEvents) != len(rec.SentNs) {
		t.Fatalf("client saw %d token events, server sent %d", len(tokenEvents), len(rec.SentNs))
	}
	for j, i := range tokenEvents {
		if got := mono(evs[i].at) - arrival; got < rec.SentNs[j] || got < rec.DueNs[j] {
			t.Errorf("token event %d read %v after arrival, before the server sent it (%v) or it was due (%v)",
				j, time.Duration(got), time.Duration(rec.SentNs[j]), time.Duration(rec.DueNs[j]))
		}
	}
}

// TestScheduleLog: one record per request with the exact planned instants, the send instants
// after them, the fault and the client's X-Correlation-ID; faults shorten or shift the
// schedule as documented.
func TestScheduleLog(t *testing.T) {
	const ttft, itl, n = 7 * time.Millisecond, 3 * time.Millisecond, 5
	cases := []struct {
		name   string
		set    func(*Options)
		stream bool
		fault  string
		check  func(t *testing.T, r ScheduleRecord)
	}{
		{name: "stream", stream: true, fault: "none", check: func(t *testing.T, r ScheduleRecord) {
			if want := planned(ttft, itl, n); !slices.Equal(r.DueNs, want) || len(r.SentNs) != n {
				t.Errorf("due %v (%d sent), want %v, all sent", r.DueNs, len(r.SentNs), want)
			}
		}},
		{name: "body", fault: "none", check: func(t *testing.T, r ScheduleRecord) {
			if want := []int64{int64(ttft + (n-1)*itl)}; !slices.Equal(r.DueNs, want) || len(r.SentNs) != 1 {
				t.Errorf("due %v (%d sent), want %v, sent", r.DueNs, len(r.SentNs), want)
			}
		}},
		{name: "stall", stream: true, fault: "stall", set: func(o *Options) { o.StallRate, o.StallDuration = 1, 40*time.Millisecond },
			check: func(t *testing.T, r ScheduleRecord) {
				want := planned(ttft, itl, n)
				k := 0
				for k < len(r.DueNs) && k < n && r.DueNs[k] == want[k] {
					k++
				}
				if k < 1 || k >= n || len(r.DueNs) != n || len(r.SentNs) != n {
					t.Fatalf("due %v (%d sent): no stall shift mid-stream", r.DueNs, len(r.SentNs))
				}
				for j := k; j < n; j++ {
					want[j] += int64(40 * time.Millisecond)
				}
				if !slices.Equal(r.DueNs, want) {
					t.Errorf("due %v, want %v (shifted by the stall from event %d)", r.DueNs, want, k)
				}
			}},
		{name: "stream_error", stream: true, fault: "stream_error", set: func(o *Options) { o.StreamErrorRate = 1 },
			check: func(t *testing.T, r ScheduleRecord) {
				k := len(r.DueNs) - 1 // the error event, due in place of token event k
				if k < 1 || k >= n || !slices.Equal(r.DueNs, planned(ttft, itl, k+1)) || len(r.SentNs) != k+1 {
					t.Errorf("due %v (%d sent), want a prefix of the schedule, the error event sent last", r.DueNs, len(r.SentNs))
				}
			}},
		{name: "disconnect", stream: true, fault: "disconnect", set: func(o *Options) { o.DisconnectRate = 1 },
			check: func(t *testing.T, r ScheduleRecord) {
				k := len(r.DueNs) - 1
				if k < 1 || k >= n || !slices.Equal(r.DueNs, planned(ttft, itl, k+1)) || len(r.SentNs) != k {
					t.Errorf("due %v (%d sent), want a prefix of the schedule, nothing sent at the cut", r.DueNs, len(r.SentNs))
				}
			}},
		{name: "error", fault: "error", set: func(o *Options) { o.ErrorRate = 1 }, check: func(t *testing.T, r ScheduleRecord) {
			if len(r.DueNs) != 0 || len(r.SentNs) != 0 {
				t.Errorf("due %v sent %v for an injected 500", r.DueNs, r.SentNs)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions()
			o.TTFT, o.ITL = ttft, itl
			if c.set != nil {
				c.set(&o)
			}
			base, sl := startLogged(t, o)
			before := time.Now().UnixNano()
			body := `{"messages":[{"role":"user","content":"x"}],"max_tokens":5,"ignore_eos":true,"stream":` + map[bool]string{true: "true", false: "false"}[c.stream] + `}`
			resp := post(t, base+"/v1/chat/completions", body, CorrelationHeader, "session-7")
			evs, _ := readSSE(resp.Body)
			resp.Body.Close()
			recs := sl.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			if r.Version != ScheduleVersion || r.Seq != 1 || r.Endpoint != "chat" || r.Stream != c.stream || r.CorrelationID != "session-7" || r.Fault != c.fault {
				t.Errorf("record %+v", r)
			}
			if r.ArrivalUnixNs < before || r.ArrivalUnixNs > time.Now().UnixNano() || r.StartNs != 0 {
				t.Errorf("arrival %d not within the request (%d..now), start %d", r.ArrivalUnixNs, before, r.StartNs)
			}
			for j := range r.SentNs {
				if r.SentNs[j] < r.DueNs[j] {
					t.Errorf("event %d sent at %d, before it was due at %d", j, r.SentNs[j], r.DueNs[j])
				}
			}
			c.check(t, r)
			if c.name == "stream" {
				var tokens []int
				for i, e := range evs {
					if strings.Contains(e.data, `"content":"`) && !strings.Contains(e.data, `"content":""`) {
						tokens = append(tokens, i)
					}
				}
				checkReceivedAfter(t, r, evs, tokens)
			}
		})
	}
}

// TestReadSchedule: the reader rejects another format version and bad JSON, naming the line.
func TestReadSchedule(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"format_version":1,"seq":1}` + "\n\n" + `{"format_version":2,"seq":2}`, "line 3: format_version 2, this reader knows 1"},
		{`{"format_version":1,"seq":1}` + "\n" + `{"format_version":`, "schedule log line 2"},
	} {
		recs, err := ReadSchedule(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || len(recs) != 1 {
			t.Errorf("%q: %d records, err %v; want %q", c.in, len(recs), err, c.want)
		}
	}
}

// fdStarved is a listener whose Accept fails with errs first, then accepts.
type fdStarved struct {
	net.Listener
	errs []error
	conn net.Conn
}

func (l *fdStarved) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.conn, nil
}

func (l *fdStarved) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000} }

// TestGuardAccept: running out of file descriptors while accepting is reported once, with
// a clear message, and waited out with a growing back-off until a connection comes; other
// errors pass through.
func TestGuardAccept(t *testing.T) {
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	enfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ENFILE)}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	inner := &fdStarved{errs: []error{emfile, emfile, enfile, emfile, emfile, emfile, emfile, emfile, emfile, emfile}, conn: c1}
	var notice bytes.Buffer
	ln := GuardAccept(inner, &notice).(*fdListener)
	var slept []time.Duration
	ln.sleep = func(d time.Duration) { slept = append(slept, d) }
	c, err := ln.Accept()
	if err != nil || c != c1 {
		t.Fatalf("Accept: %v, %v; want the connection after the errors", c, err)
	}
	msg := notice.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "mockllm: out of file descriptors accepting connections on 127.0.0.1:8000") ||
		!strings.Contains(msg, "too many open files") || !strings.Contains(msg, "ulimit -n") {
		t.Errorf("notice %q, want one line naming the address, the error and the remedy", msg)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(slept, want) {
		t.Errorf("back-off %v, want %v", slept, want)
	}
	// Another exhaustion later is not reported again; other errors pass through.
	inner.errs = []error{emfile, net.ErrClosed}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after close: %v", err)
	}
	if notice.String() != msg {
		t.Errorf("reported again: %q", notice.String())
	}
}

// TestGuardAcceptServes: behind GuardAccept an HTTP server that ran out of descriptors
// serves again once they are back, and says so once (not once per failed accept as
// net/http's own "Accept error" log does).
func TestGuardAcceptServes(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 50)
	for i := range errs {
		errs[i] = &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	starved := &starvedOnce{Listener: inner, errs: errs}
	var notice lockbuf.Buffer
	ln := GuardAccept(starved, &notice).(*fdListener)
	ln.sleep = func(time.Duration) {}
	var httpLog lockbuf.Buffer
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ErrorLog: log.New(&httpLog, "", 0)}
	go hs.Serve(ln)
	defer hs.Close()
	resp, err := http.Get("http://" + inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Errorf("body %q", b)
	}
	if n := strings.Count(notice.String(), "out of file descriptors"); n != 1 {
		t.Errorf("reported %d times: %q", n, notice.String())
	}
	if strings.Contains(httpLog.String(), "Accept error") {
		t.Errorf("net/http logged per accept: %q", httpLog.String())
	}
}

// starvedOnce fails its first accepts with errs, then accepts for inner.
type starvedOnce struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *starvedOnce) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}
