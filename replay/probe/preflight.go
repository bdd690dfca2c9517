package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/redact"
)

// The preflight (replay.Options.Preflight; replay and profile run it unless --no-preflight): before
// anything of the plan is sent, one tiny request per URL with the plan's own body (its first
// record), its output limit set to preflightLimit tokens and the members bound to it lowered
// with it (endpoint.SetLimit: min_tokens above the limit is a body vLLM refuses). A client
// error to that shortened body is asked again with the plan's body unchanged, which alone
// decides: the preflight never refuses a run for a body the run would not send. It finds
// what would make the run mean something else than it seems to:
//
//   - a server that ignores the plan's output-limit field (llama.cpp reads max_tokens, not
//     max_completion_tokens): every output would run to the server's own length. It then
//     tries chat's other field and names the flag that sends it;
//   - a server that closes the connection after each response while announcing keep-alive
//     (llama.cpp after a streamed response): the workers are told, and open a new connection
//     per request to it instead of writing on dead ones (replay/connpolicy.go);
//   - what the server says it is: its Server header, /v1/models owner, llama.cpp's /props,
//     vLLM's /version.
//
// Its findings go into run.json ("preflight") and, as one line each, to the notices. It
// refuses the run (replay.Run returns an error, exit 2, no run directory) only when the run could
// measure nothing: the URL cannot be reached, or answers the plan's own request with a
// client error (4xx other than 408 and 429: a wrong path, model or key, a body the server
// rejects), or with a body that is not the API's. Everything else is a warning and the run
// goes on: a 5xx, 408 or 429 (the server may be loading or busy), an ignored limit (the run
// still measures the server, at its own lengths), no answer within preflightTimeout.
// Nothing of the preflight is in the logs or the results.

// Preflight bounds.
const (
	// preflightLimit is the output length the preflight asks for.
	preflightLimit = 2
	// preflightTimeout bounds the preflight's inference request (at most the request timeout).
	preflightTimeout = 60 * time.Second
	// preflightGetTimeout bounds each identity request.
	preflightGetTimeout = 3 * time.Second
	// preflightBodyLimit bounds what is read of a non-streamed answer or an identity page.
	preflightBodyLimit = 4 << 20
	// closeWatch is how long after a whole response the preflight waits to see the server
	// close the connection: the closes it looks for come within microseconds.
	closeWatch = 200 * time.Millisecond
)

// PreflightUserAgentSuffix ends the User-Agent of the preflight's requests
// ("llmbench-replay/VERSION (preflight)"), so that a server's logs, and test servers that
// count the run's requests, can tell them from the run's.
const PreflightUserAgentSuffix = " (preflight)"

// ignoredOver is the fewest output tokens that show a limit of n ignored: a server that keeps
// to it sends at most n (n+1 when it counts an end token), so more than twice n plus two is
// no rounding. Counts from events or words are lower bounds, so they never overstate it.
func ignoredOver(n int) int { return 2*n + 2 }

// errPreflight marks the preflight's refusals: the run would measure nothing.
var errPreflight = errors.New("preflight")

// PreflightOptions are what the preflight sends, and to which URLs.
type PreflightOptions struct {
	// URLs are the servers' base URLs, each preflighted in turn.
	URLs []string
	// Endpoint is the plan's endpoint type, Method its HTTP method (default POST), Model its
	// model.
	Endpoint, Method, Model string
	// Path and Body are the plan's first request's.
	Path string
	Body []byte
	// Headers are the run's request headers (the plan's merged with the user's, the key's),
	// TLS its https configuration.
	Headers [][2]string
	TLS     *tls.Config
	// UserAgent is the run's User-Agent; the preflight's adds PreflightUserAgentSuffix.
	UserAgent string
	// RequestTimeout is the run's; the inference request gets at most preflightTimeout.
	RequestTimeout time.Duration
	// Notice takes each finding's one-line warning.
	Notice func(string)
}

// Preflight runs the preflight against every URL: the findings for run.json, the indexes of
// the URLs that close the connection after each response, and the error that refuses the
// run. A close of stop (Ctrl-C) cuts it short.
func Preflight(stop <-chan struct{}, o PreflightOptions) (*rawlog.Preflight, []int, error) {
	ep, err := endpoint.Lookup(o.Endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("preflight: %w", err)
	}
	method := o.Method
	if method == "" {
		method = http.MethodPost
	}
	// Ctrl-C (Stop) cuts the preflight short: nothing of the plan is sent then either.
	stopped, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-stopped.Done():
		}
	}()
	pf := &rawlog.Preflight{}
	var closes []int
	for i, base := range o.URLs {
		p := &preflighter{stop: stopped, ep: ep, headers: o.Headers, ua: o.UserAgent + PreflightUserAgentSuffix, method: method, model: o.Model,
			timeout: min(preflightTimeout, o.RequestTimeout)}
		// HTTP/1.1 (a custom dialer turns HTTP/2 off), no proxy, no compression: as the
		// workers talk to the server.
		p.tr = &http.Transport{TLSClientConfig: o.TLS, DialContext: p.dial, DisableCompression: true, MaxIdleConnsPerHost: 1}
		t, err := p.run(base, o.Path, o.Body)
		p.tr.CloseIdleConnections()
		if stopped.Err() != nil {
			return nil, nil, fmt.Errorf("%w: interrupted; nothing of the plan was sent", errPreflight)
		}
		if err != nil {
			return nil, nil, err
		}
		t.URLIndex = i
		for _, w := range t.Warnings {
			o.Notice(w)
		}
		if t.Connection == rawlog.ConnClosesAfterResponse {
			closes = append(closes, i)
		}
		pf.Targets = append(pf.Targets, *t)
	}
	return pf, closes, nil
}

// preflighter is one URL's preflight.
type preflighter struct {
	stop    context.Context // cancelled by Stop
	ep      *endpoint.Endpoint
	headers [][2]string
	ua      string
	method  string
	model   string
	timeout time.Duration
	tr      *http.Transport
	// eof is set when the server closed the preflight's connection (its FIN read).
	eof atomic.Bool
}

// dial opens the connections, watching for the server's close.
func (p *preflighter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	p.eof.Store(false)
	return &watchConn{Conn: c, eof: &p.eof}, nil
}

// watchConn notes the server's FIN: the transport's idle read returns io.EOF.
type watchConn struct {
	net.Conn
	eof *atomic.Bool
}

func (c *watchConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// answer is what one preflight request brought back.
type answer struct {
	status    int
	server    string
	closeHdr  bool   // the response said Connection: close
	whole     bool   // read to its end
	errText   string // transport error or the server's message of a non-2xx answer
	transport bool   // errText is a transport error: nothing answered
	parseErr  string // the 2xx body is not the API's
	tokens    int    // output tokens, at least
	from      string // usage, events or words
}

// run preflights base with body (the plan's first), sent to path.
func (p *preflighter) run(base, path string, body []byte) (*rawlog.PreflightTarget, error) {
	b, err := endpoint.ParseBase(base)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redact.URL(base), err)
	}
	target := b.URL(path)
	shown := p.method + " " + redact.URL(target)
	t := &rawlog.PreflightTarget{Connection: rawlog.ConnUnknown}
	field, _, hasLimit := endpoint.LimitField(body)
	if !hasLimit {
		field = defaultLimitField(p.ep.Name)
	}
	planBody := body
	if field != "" {
		if short, err := endpoint.SetLimit(nil, body, field, preflightLimit); err == nil {
			body = short
			t.LimitField, t.LimitAsked = field, preflightLimit
		}
	}
	a := p.send(target, body)
	if t.LimitField != "" && refuses(a) {
		// The shortened body is the preflight's, not the run's: only the plan's own body, as
		// the run sends it, says whether the run's requests would be refused.
		own := p.send(target, planBody)
		if !refuses(own) && !own.transport {
			t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s refused the plan's first request with its output limit lowered to %d (HTTP %d%s) and accepted it as the plan has it: whether the server honours %s was not checked; the run goes on",
				shown, preflightLimit, a.status, quoteMsg(a.errText), t.LimitField))
			t.LimitField, t.LimitAsked, hasLimit = "", 0, false
		}
		a = own
	}
	t.Status, t.Server = a.status, a.server
	if a.errText != "" {
		t.Error = a.errText
	}
	switch {
	case a.transport:
		return nil, fmt.Errorf("%w: %s: %s: the server cannot be reached, so every request of the run would fail; nothing of the plan was sent (--no-preflight runs it anyway)",
			errPreflight, shown, a.errText)
	case a.status == http.StatusNotFound:
		// A wrong path, or a model the server does not serve (vLLM's 404 model_not_found).
		hint := b.NotFoundHint(path)
		if modelNotServed(a.errText) {
			hint = fmt.Sprintf("the server does not serve the plan's model: check --model (GET %s lists the models it serves)", b.URL("/v1/models"))
		}
		return nil, fmt.Errorf("%w: %s answered the plan's first request with HTTP 404%s: every request of the run would get the same; %s; nothing of the plan was sent (--no-preflight runs it anyway)",
			errPreflight, shown, quoteMsg(a.errText), hint)
	case refuses(a):
		return nil, fmt.Errorf("%w: %s answered the plan's first request with HTTP %d%s: every request of the run would get the same; nothing of the plan was sent (--no-preflight runs it anyway)",
			errPreflight, shown, a.status, quoteMsg(a.errText))
	case a.status != 0 && a.status/100 != 2:
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s answered HTTP %d%s: the run goes on, and its requests may fail the same way", shown, a.status, quoteMsg(a.errText)))
	case a.status == 0 && t.LimitField != "":
		// A 2-token answer that takes this long is most likely no 2-token answer.
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s: %s, although it asked for %d output tokens: the server may ignore %s; the run goes on", shown, a.errText, preflightLimit, t.LimitField))
	case a.status == 0:
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s: %s: the run goes on", shown, a.errText))
	case a.parseErr != "":
		return nil, fmt.Errorf("%w: %s answered with a body that is not a %s response (%s): every request of the run would be invalid; is --endpoint-type right? (--no-preflight runs it anyway)",
			errPreflight, shown, p.ep.Name, a.parseErr)
	}
	t.OutputTokens, t.OutputFrom = a.tokens, a.from
	t.Connection = connPolicyOf(a, p.eof.Load())
	if a.status/100 == 2 && hasLimit && p.ep.ProducesTokens {
		p.judgeLimit(t, a, target, body, shown)
	}
	if t.Connection == rawlog.ConnClosesAfterResponse {
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s closes the connection after each response although it announces keep-alive: the workers open a new connection per request to it (the server's policy, never counted against the client)", shown))
	}
	p.identify(t, b)
	return t, nil
}

// refuses says whether an answer is a client error the run's requests would get too: a 4xx
// other than 408 and 429 (the server busy).
func refuses(a answer) bool {
	return a.status/100 == 4 && a.status != http.StatusRequestTimeout && a.status != http.StatusTooManyRequests
}

// judgeLimit says whether the server kept to the limit, and when it did not, tries chat's
// other field and says which flag to use.
func (p *preflighter) judgeLimit(t *rawlog.PreflightTarget, a answer, target string, body []byte, shown string) {
	honoured, known := limitKept(a)
	if !known {
		return
	}
	t.LimitHonoured = &honoured
	if honoured {
		return
	}
	got := fmt.Sprintf("asked for %d output tokens, got at least %d", preflightLimit, a.tokens)
	alt := ""
	if p.ep.Name == "chat" {
		switch t.LimitField {
		case "max_completion_tokens":
			alt = "max_tokens"
		case "max_tokens":
			alt = "max_completion_tokens"
		}
	}
	if alt == "" {
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s ignored %s (%s): the outputs will run to the server's own lengths, not the plan's", shown, t.LimitField, got))
		return
	}
	t.AltField = alt
	var altKept, altKnown bool
	var b2 answer
	if b, err := endpoint.SetLimit(nil, body, alt, preflightLimit); err == nil {
		b2 = p.send(target, b)
		if t.Connection == rawlog.ConnUnknown {
			t.Connection = connPolicyOf(b2, p.eof.Load())
		}
		if b2.status/100 == 2 && b2.parseErr == "" {
			altKept, altKnown = limitKept(b2)
		}
	}
	if altKnown {
		t.AltHonoured = &altKept
	}
	switch {
	case altKept && alt == "max_tokens":
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s ignored max_completion_tokens (%s) and honours max_tokens: compile the plan with --use-legacy-max-tokens, or every output runs to the server's own length", shown, got))
	case altKept:
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s ignored max_tokens (%s) and honours max_completion_tokens: compile the plan without --use-legacy-max-tokens, or every output runs to the server's own length", shown, got))
	case !altKnown:
		// A refusal or no answer says nothing of whether the server reads the other field.
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s ignored %s (%s); %s could not be tried (HTTP %d%s): the outputs will run to the server's own lengths, not the plan's", shown, t.LimitField, got, alt, b2.status, quoteMsg(b2.errText)))
	default:
		t.Warnings = append(t.Warnings, fmt.Sprintf("replay: preflight: %s ignored %s (%s), and %s too: the outputs will run to the server's own lengths, not the plan's", shown, t.LimitField, got, alt))
	}
}

// limitKept judges an answer's output against preflightLimit; known is false when the
// count says neither (between the limit and ignoredOver, from a lower bound).
func limitKept(a answer) (kept, known bool) {
	switch {
	case a.tokens > ignoredOver(preflightLimit):
		return false, true
	case a.tokens <= preflightLimit+1:
		return a.whole || a.from == "usage", a.whole || a.from == "usage"
	}
	return false, false
}

// connPolicyOf is the connection policy an answer showed; eof says the server closed the
// connection after it.
func connPolicyOf(a answer, eof bool) string {
	switch {
	case a.status == 0 || !a.whole:
		return rawlog.ConnUnknown
	case a.closeHdr:
		return rawlog.ConnClose
	case eof:
		return rawlog.ConnClosesAfterResponse
	}
	return rawlog.ConnKeepAlive
}

// defaultLimitField is the field the preflight adds to a body of an API that has one when
// the plan set none (max_tokens is the one every chat server reads), so that its answer
// stays short; "" leaves the body alone (raw and template bodies, APIs without tokens).
func defaultLimitField(api string) string {
	switch api {
	case "chat", "completions", "anthropic_messages":
		return "max_tokens"
	case "responses":
		return "max_output_tokens"
	case "huggingface_generate":
		return "parameters.max_new_tokens"
	}
	return ""
}

// quoteMsg is `: "message"` for a server's message, "" for none.
func quoteMsg(m string) string {
	if m == "" {
		return ""
	}
	return fmt.Sprintf(": %q", m)
}

// send posts body to target and reads the answer: a stream until it shows the limit was
// ignored (then it stops reading), a body up to preflightBodyLimit.
func (p *preflighter) send(target string, body []byte) answer {
	var a answer
	ctx, cancel := context.WithTimeout(p.stop, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, p.method, target, bytes.NewReader(body))
	if err != nil {
		a.errText, a.transport = redact.Text(err.Error()), true
		return a
	}
	for _, h := range p.headers {
		req.Header.Set(h[0], h[1])
	}
	req.Header.Set("User-Agent", p.ua)
	resp, err := (&http.Client{Transport: p.tr, CheckRedirect: noRedirect}).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named by the caller, redacted
		}
		a.errText = errline.Net(err) // redacted; a net.OpError without its addresses
		if errors.Is(err, context.DeadlineExceeded) {
			a.errText = fmt.Sprintf("no answer within %v", p.timeout)
		} else {
			a.transport = true
		}
		return a
	}
	defer resp.Body.Close()
	a.status, a.server, a.closeHdr = resp.StatusCode, resp.Header.Get("Server"), resp.Close
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, preflightBodyLimit))
		a.errText = redact.Text(endpoint.ErrorMessage(b))
		a.whole = true
		return a
	}
	head := make([]byte, 0, 32<<10)
	n, rerr := io.ReadAtLeast(resp.Body, head[:cap(head)], 1)
	head = head[:n]
	if endpoint.DetectFormat(resp.Header.Get("Content-Type"), head) == endpoint.FormatSSE {
		p.readStream(&a, resp.Body, head, rerr)
	} else {
		p.readBody(&a, resp.Body, head, rerr)
	}
	if a.whole {
		// The transport reads the connection again only now: give the server's FIN, when
		// there is one, the time to arrive.
		for t0 := time.Now(); time.Since(t0) < closeWatch && !p.eof.Load(); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return a
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// readStream reads an event stream, counting content events and usage, until its end or
// until it has shown the limit ignored.
func (p *preflighter) readStream(a *answer, body io.Reader, head []byte, rerr error) {
	var sc endpoint.SSEScanner
	var d endpoint.Delta
	var usage endpoint.Usage
	events, bad, good := 0, "", false
	buf := make([]byte, 32<<10)
	chunk := head
	for {
		sc.Feed(chunk, 0)
		for {
			ev, ok := sc.Next()
			if !ok {
				break
			}
			events += p.event(ev.Data, &d, &usage, &bad, &good)
		}
		if rerr != nil {
			break
		}
		if usage.Has&endpoint.UsageCompletion == 0 && events > ignoredOver(preflightLimit) {
			a.tokens, a.from = events, "events"
			return // the limit was ignored: no need to read thousands of tokens
		}
		var n int
		n, rerr = body.Read(buf)
		chunk = buf[:n]
	}
	for {
		ev, ok := sc.Flush()
		if !ok {
			break
		}
		events += p.event(ev.Data, &d, &usage, &bad, &good)
	}
	a.whole = rerr == io.EOF
	if rerr != io.EOF && rerr != nil {
		a.errText = redact.Text(rerr.Error())
	}
	if bad != "" && !good {
		a.parseErr = bad
	}
	a.tokens, a.from = events, "events"
	if usage.Has&endpoint.UsageCompletion != 0 {
		a.tokens, a.from = usage.CompletionTokens, "usage"
	}
}

// event parses one SSE event's data: 1 when it carried content.
func (p *preflighter) event(data []byte, d *endpoint.Delta, usage *endpoint.Usage, bad *string, good *bool) int {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return 0
	}
	d.Reset()
	if err := p.ep.ParseEvent(data, d); err != nil {
		if *bad == "" {
			*bad = err.Error()
		}
		return 0
	}
	*good = true
	usage.Merge(d.Usage)
	if d.HasContent() {
		return 1
	}
	return 0
}

// readBody reads a whole body and counts its output.
func (p *preflighter) readBody(a *answer, body io.Reader, head []byte, rerr error) {
	b := head
	if rerr == nil {
		rest, err := io.ReadAll(io.LimitReader(body, preflightBodyLimit))
		b = append(b, rest...)
		rerr = err
	}
	a.whole = rerr == nil || rerr == io.EOF
	var d endpoint.Delta
	if err := p.ep.ParseEvent(bytes.TrimSpace(b), &d); err != nil {
		a.parseErr = err.Error()
		return
	}
	a.tokens, a.from = len(strings.Fields(string(d.Content)+" "+string(d.Reasoning))), "words"
	if d.Usage.Has&endpoint.UsageCompletion != 0 {
		a.tokens, a.from = d.Usage.CompletionTokens, "usage"
	}
}

// modelNotServedRE matches a 404's message that blames the model, not the path: vLLM's and
// SGLang's "The model `X` does not exist.", OpenAI's model_not_found.
var modelNotServedRE = regexp.MustCompile(`(?i)\bmodel\b.*\b(does not exist|not found)\b|model_not_found`)

// modelNotServed reports whether a 404's message says that the server does not serve the
// model asked for.
func modelNotServed(msg string) bool { return modelNotServedRE.MatchString(msg) }
