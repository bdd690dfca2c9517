package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/http1"
)

// Single sends requests one at a time, outside a run, with the workers' HTTP/1.1 client: the
// same request head, the same response parser and limits, each read timestamped as it returns
// and before it is parsed. Its requests come back as raw-log Request records, so analyze's
// definitions apply to them unchanged. chat talks to an endpoint turn by turn through it. A
// Single keeps one keep-alive connection; it is not safe for concurrent use.
type Single struct {
	t       *http1.Target
	dialer  net.Dialer
	c       *http1.NetConn
	eb      http1.Buffers
	q       rawlog.Request
	start   time.Time
	timeout time.Duration
}

// SingleOptions configure a Single.
type SingleOptions struct {
	// URL is the base URL (http:// or https://), Path the request path under it.
	URL, Path string
	// Headers are the endpoint's fixed headers (a plan's Meta.Headers), UserHeaders the
	// user's 'Name: value' headers (-H), which replace an endpoint header of the same name.
	Headers     map[string]string
	UserHeaders []string
	// APIKey is sent as replay sends it (Authorization: Bearer, or x-api-key to Anthropic).
	APIKey string
	// TLSCAFile and TLSInsecureSkipVerify configure https as a run's options do.
	TLSCAFile             string
	TLSInsecureSkipVerify bool
	// Timeout bounds one request, connect to last byte (0: http1.DefaultRequestTimeout).
	Timeout time.Duration
	// MaxResponseBytes bounds the stored response body (0: DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// UserAgent is the User-Agent header; "" sends none.
	UserAgent string
}

// NewSingle checks o and returns a Single; nothing is sent or dialled yet.
func NewSingle(o SingleOptions) (*Single, error) {
	headers, err := http1.MergeHeaders(o.Headers, o.UserHeaders, o.APIKey)
	if err != nil {
		return nil, err
	}
	tcfg, err := http1.LoadTLSConfig(o.TLSCAFile, o.TLSInsecureSkipVerify)
	if err != nil {
		return nil, err
	}
	u := o.URL
	if !strings.Contains(u, "://") {
		u = "http://" + u // as Options: AIPerf adds http:// when missing
	}
	t, err := http1.NewTarget(u, &http1.HeadConfig{Method: "POST", Paths: []string{o.Path}, Headers: headers, UserAgent: o.UserAgent}, tcfg)
	if err != nil {
		return nil, err
	}
	s := &Single{t: t, start: time.Now(), timeout: o.Timeout}
	if s.timeout <= 0 {
		s.timeout = http1.DefaultRequestTimeout
	}
	s.eb.Init(o.MaxResponseBytes)
	http1.ResetResponse(&s.q)
	return s, nil
}

// nowNs is the Single's clock: nanoseconds since NewSingle, monotonic.
func (s *Single) nowNs() int64 { return int64(time.Since(s.start)) }

// Do sends body and returns its exchange as a Request record: times in nanoseconds on the
// Single's clock, Outcome, Status and Err set as a worker sets them (Index 0, no planned
// instant). onRead, when set, is called after each read of the response body with the body so
// far (to show a stream as it arrives); it runs between reads, so it should be quick. A
// cancelled ctx cuts the request off (outcome aborted). The record is reused by the next Do.
func (s *Single) Do(ctx context.Context, body []byte, onRead func(body []byte)) *rawlog.Request {
	q := &s.q
	q.Index, q.Outcome, q.Status, q.ConnReused, q.URLIndex = 0, 0, 0, false, 0
	q.IntendedNs, q.ReadyNs = -1, -1
	q.WriteStartNs, q.WriteEndNs, q.HeaderNs, q.EndNs = -1, -1, -1, -1
	q.ConnectStartNs, q.ConnectEndNs = -1, -1
	q.Err = ""
	http1.ResetResponse(q)
	deadline := time.Now().Add(s.timeout)
	for attempt := 0; ; attempt++ {
		if s.c == nil {
			q.ConnectStartNs = s.nowNs()
			c, err := http1.Dial(ctx, &s.dialer, s.t, 0, deadline)
			q.ConnectEndNs = s.nowNs()
			if err != nil {
				s.end(ctx, http1.NetError, err, "connect: ")
				return q
			}
			s.c = c
		}
		c := s.c
		q.ConnReused = c.Used
		c.NC.SetDeadline(deadline)
		stop := context.AfterFunc(ctx, func() { c.NC.SetDeadline(http1.LongAgo) })
		res, err := s.exchange(c, body, onRead)
		stop()
		if res == http1.StaleConn && attempt == 0 && ctx.Err() == nil {
			// The server closed the idle connection as it was reused: nothing reached it.
			c.NC.Close()
			s.c = nil
			q.Status, q.WriteStartNs, q.WriteEndNs, q.HeaderNs = 0, -1, -1, -1
			http1.ResetResponse(q)
			continue
		}
		c.Used = true
		if c.Broken || res != http1.OK {
			c.NC.Close()
			s.c = nil
		}
		s.end(ctx, res, err, "")
		return q
	}
}

// exchange is the workers' exchange (http1.Exchange) with onRead after every read.
func (s *Single) exchange(c *http1.NetConn, body []byte, onRead func([]byte)) (http1.Result, error) {
	q := &s.q
	eb := &s.eb
	if err := eb.Write(c.NC, s.t.Heads[0], body, "", 0, q, s.nowNs); err != nil {
		return http1.ClassifyNetErr(&c.Conn, err, false)
	}
	var rp http1.Parser
	rp.Reset(eb)
	for {
		n, err := c.NC.Read(rp.Space(eb, q))
		t := s.nowNs()
		if n > 0 {
			end, res, perr := rp.OnRead(&c.Conn, eb, n, t, q)
			if onRead != nil && rp.HeadDone() {
				onRead(q.Body)
			}
			if end {
				return res, perr
			}
		}
		if err != nil {
			return rp.OnEnd(&c.Conn, err)
		}
	}
}

// end sets the outcome of the request just exchanged, as a worker's settle does.
func (s *Single) end(ctx context.Context, res http1.Result, err error, prefix string) {
	q := &s.q
	q.EndNs = s.nowNs()
	switch {
	case res == http1.OK:
		q.Outcome = rawlog.OutcomeCompleted
	case ctx.Err() != nil:
		q.Outcome = rawlog.OutcomeAborted
		q.Err = "cut off: " + context.Cause(ctx).Error()
	case res == http1.Deadline:
		q.Outcome = rawlog.OutcomeFailed
		q.Err = "timeout"
	default:
		q.Outcome = rawlog.OutcomeFailed
		q.Err = http1.FailText(res, err, prefix, len(q.Body), &s.eb)
	}
}

// Close closes the kept connection.
func (s *Single) Close() error {
	if s.c == nil {
		return nil
	}
	err := s.c.NC.Close()
	s.c = nil
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("replay: closing the connection to %s: %w", strings.TrimSpace(s.t.Host), err)
	}
	return nil
}
