// Package chat is the chat command's workflow (AIPerf's `aiperf chat`): one conversation
// with an endpoint, a message at a time, each turn sent through the workers' HTTP client
// (probe.Single) so that its timings are taken as a run takes them, its reply streamed as
// it arrives, and after it the turn's time to first token, output token throughput,
// inter-token latency and prompt-cache hits, computed by analyze's own code from the turn's
// raw record (the same definitions as every export). The command (cmd/chat) parses the
// flags into Settings, whose Options method checks them (settings.go), and calls Run. It
// imports replay (the URL, API key and response-size rules) and plan (the tokenizer default).
package chat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/internal/errline"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/replay/probe"
	"github.com/llmbench/llmbench/tokenizer"
)

// Options is what the chat flags say, checked.
type Options struct {
	// Endpoint is the API, with its path set (--custom-endpoint applied).
	Endpoint *endpoint.Endpoint
	// Single configures the connection.
	Single probe.SingleOptions
	// Model, SystemPrompt, MaxTokens and LegacyMaxTokens shape each request.
	Model, SystemPrompt string
	MaxTokens           int
	LegacyMaxTokens     bool
	// Quick sends one message, Prompt (the arguments joined, else DefaultPrompt).
	Quick  bool
	Prompt string
	// NoHistory sends each message without the conversation so far.
	NoHistory bool
	// Tokenizer counts tokens client-side; nil with UseServerTokenCount.
	Tokenizer           *tokenizer.Tokenizer
	UseServerTokenCount bool
}

// maxMessage is the longest message line read from stdin.
const maxMessage = 16 << 20

// Run holds the conversation o: with o.Quick one message, o.Prompt, else the messages read
// from stdin, one a line, until EOF or ctx ends. Replies stream to stdout, followed by each
// turn's figures; prompts and notices go to stderr, so stdout holds the conversation only.
// It returns 0 when every turn was answered, 1 when a turn failed, 2 on bad input (one
// line "chat: ..." on stderr), 130 when ctx was interrupted.
func Run(ctx context.Context, o *Options, stdin io.Reader, stdout, stderr io.Writer) int {
	bad := func(err error) int {
		fmt.Fprintln(stderr, errline.Format("chat", err))
		return 2
	}
	single, err := probe.NewSingle(o.Single)
	if err != nil {
		return bad(err)
	}
	defer single.Close()
	ro := analyze.RequestOptions{Endpoint: o.Endpoint, UseServerTokenCount: o.UseServerTokenCount}
	if o.Tokenizer != nil {
		ro.Tokenizer = o.Tokenizer
	}
	an, err := analyze.NewRequestAnalyzer(ro)
	if err != nil {
		return bad(err)
	}
	s := &session{o: o, single: single, an: an, stdout: stdout, stderr: stderr}
	fmt.Fprintf(stderr, "Using model: %s\n", o.Model)
	if o.Quick {
		if !s.turn(ctx, o.Prompt) {
			return exitCode(ctx, 1)
		}
		return 0
	}
	return s.loop(ctx, stdin)
}

// exitCode is 130 when ctx was interrupted, else code.
func exitCode(ctx context.Context, code int) int {
	if ctx.Err() != nil {
		return 130
	}
	return code
}

// session is one conversation.
type session struct {
	o       *Options
	single  *probe.Single
	an      *analyze.RequestAnalyzer
	history []endpoint.Message
	stdout  io.Writer
	stderr  io.Writer
	failed  bool
}

// loop reads messages from stdin, one a line, until EOF or ctx ends.
func (s *session) loop(ctx context.Context, stdin io.Reader) int {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 0, 64<<10), maxMessage)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	fmt.Fprintln(s.stderr, "Please enter a message for the chat model (Ctrl-D to exit):")
	for {
		fmt.Fprint(s.stderr, "> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.stderr)
			return 130
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(s.stderr)
			if err := <-readErr; err != nil {
				fmt.Fprintf(s.stderr, "chat: reading stdin: %v\n", err)
				return 2
			}
			if s.failed {
				return 1
			}
			return 0
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !s.turn(ctx, line) {
			if ctx.Err() != nil {
				return 130
			}
			s.failed = true
		}
	}
}

// turn sends one message, streams the reply to stdout and prints the turn's figures. It
// reports whether the turn was answered.
func (s *session) turn(ctx context.Context, msg string) bool {
	o := s.o
	var msgs []endpoint.Message
	if o.SystemPrompt != "" {
		msgs = append(msgs, endpoint.Message{Role: "system", Content: o.SystemPrompt})
	}
	if !o.NoHistory && !o.Quick {
		msgs = append(msgs, s.history...)
	}
	msgs = append(msgs, endpoint.Message{Role: "user", Content: msg})
	req := endpoint.Request{Model: o.Model, Messages: msgs, MaxTokens: o.MaxTokens, Streaming: true,
		LegacyMaxTokens: o.LegacyMaxTokens, IncludeUsage: true}
	body, err := o.Endpoint.Render(nil, &req)
	if err != nil {
		fmt.Fprintln(s.stderr, errline.Format("chat", err))
		return false
	}
	rec := mmapds.Record{Phase: mmapds.PhaseProfile, BodyLen: uint32(len(body)), OSL: uint32(o.MaxTokens)}
	if o.Tokenizer != nil {
		// The ISL as the plan verifies it: every message's text joined by a space.
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.Content
		}
		rec.ISL = uint32(o.Tokenizer.Count(strings.Join(texts, " ")))
	}
	d := newDisplay(o.Endpoint, s.stdout)
	q := s.single.Do(ctx, body, d.feed)
	shown := d.finish()
	m := s.an.Analyze(q, &rec)
	if !m.Valid() {
		if shown {
			fmt.Fprintln(s.stdout)
		}
		fmt.Fprintf(s.stderr, "chat: the turn failed: %s\n", m.Error())
		return false
	}
	if !shown {
		// A reply not streamed (a whole JSON body): shown now, whole.
		if r := m.Reasoning(); len(r) > 0 {
			fmt.Fprintf(s.stdout, "%s\n", r)
		}
		s.stdout.Write(m.Content())
	}
	fmt.Fprintln(s.stdout)
	for _, l := range turnLines(m) {
		fmt.Fprintln(s.stdout, l)
	}
	if !o.NoHistory && !o.Quick {
		s.history = append(s.history, endpoint.Message{Role: "user", Content: msg},
			endpoint.Message{Role: "assistant", Content: string(m.Content())})
	}
	return true
}

// turnLines are a turn's figures as AIPerf's chat prints them: TTFT, TPS (the output
// sequence over the request latency: it includes the TTFT), ITL and its decode rate (left out
// for a one-token reply, where they are undefined), and the prompt-cache hits when the
// server reports them.
func turnLines(m analyze.RequestMetrics) []string {
	var out []string
	if v, ok := m.Value(analyze.MTimeToFirstToken); ok {
		out = append(out, fmt.Sprintf("TTFT: %.2f ms", v))
	}
	lat, _ := m.Value(analyze.MRequestLatency)
	if bad := m.UsageProblem(); bad != "" && m.ServerTokenCount() {
		// The server's counts are the TPS's: an impossible one gives no rate (a negative
		// or absurd one would print as if measured).
		out = append(out, fmt.Sprintf("TPS:  not measured: the server's usage has %s (latency %.2fs)", bad, lat/1e3))
	} else if tps, ok := m.Value(analyze.ME2EOutputTokenThroughput); ok {
		osl, _ := m.Value(analyze.MOutputSequenceLength)
		what := fmt.Sprintf("%d tokens", int(osl))
		if r, ok := m.Value(analyze.MReasoningTokenCount); ok && r > 0 {
			what += fmt.Sprintf(", %d reasoning", int(r))
		}
		out = append(out, fmt.Sprintf("TPS:  %.2f tokens/s (%s in %.2fs)", tps, what, lat/1e3))
	} else if _, ok := m.Value(analyze.MOutputSequenceLength); !ok {
		out = append(out, fmt.Sprintf("TPS:  the server sent no token counts (latency %.2fs)", lat/1e3))
	}
	if bad := m.UsageProblem(); bad != "" && !m.ServerTokenCount() {
		out = append(out, "Note: the server's usage has "+bad+" (the TPS counts tokens with the tokenizer)")
	}
	if itl, ok := m.Value(analyze.MInterTokenLatency); ok && (m.UsageProblem() == "" || !m.ServerTokenCount()) {
		line := fmt.Sprintf("ITL:  %.2f ms/token", itl)
		if r, ok := m.Value(analyze.MOutputTokenThroughputPerUser); ok {
			line += fmt.Sprintf(" (decode %.2f tokens/s)", r)
		}
		out = append(out, line)
	}
	cached, okC := m.Value(analyze.MUsagePromptCacheReadTokens)
	prompt, okP := m.Value(analyze.MUsagePromptTokens)
	if okC && okP && prompt > 0 {
		out = append(out, fmt.Sprintf("Cache: %d/%d prompt tokens cached (%.1f%%)", int(cached), int(prompt), cached/prompt*100))
	}
	return out
}

// display shows a reply as it streams: the client's goroutine hands it each read's body so
// far (feed, which only copies), and a goroutine of its own parses the events and writes their
// text, so that a slow terminal never delays the next read or its timestamp.
type display struct {
	ep      *endpoint.Endpoint
	w       io.Writer
	mu      sync.Mutex
	pending []byte
	seen    int
	closed  bool
	wake    chan struct{}
	done    chan bool
}

func newDisplay(ep *endpoint.Endpoint, w io.Writer) *display {
	d := &display{ep: ep, w: w, wake: make(chan struct{}, 1), done: make(chan bool, 1)}
	go d.run()
	return d
}

// feed takes the response body so far.
func (d *display) feed(body []byte) {
	d.mu.Lock()
	if len(body) > d.seen {
		d.pending = append(d.pending, body[d.seen:]...)
		d.seen = len(body)
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// finish waits until everything fed is shown; it reports whether any text was.
func (d *display) finish() bool {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return <-d.done
}

func (d *display) run() {
	var sc endpoint.SSEScanner
	var delta endpoint.Delta
	shown, stream := false, false
	inReasoning := false
	var head []byte
	show := func(ev endpoint.Event) {
		c0, r0 := len(delta.Content), len(delta.Reasoning)
		if d.ep.ParseEvent(ev.Data, &delta) != nil {
			return // analyze judges the reply; the display shows what it can
		}
		if r := delta.Reasoning[r0:]; len(r) > 0 {
			d.w.Write(r)
			shown, inReasoning = true, true
		}
		if c := delta.Content[c0:]; len(c) > 0 {
			if inReasoning {
				d.w.Write([]byte("\n"))
				inReasoning = false
			}
			d.w.Write(c)
			shown = true
		}
	}
	for {
		<-d.wake
		d.mu.Lock()
		p, closed := d.pending, d.closed
		d.pending = nil
		d.mu.Unlock()
		if !stream && len(p) > 0 {
			head = append(head, p...)
			if endpoint.DetectFormat("", head) != endpoint.FormatSSE {
				if len(head) < 64 && !closed {
					continue // too little to tell yet
				}
				d.done <- false // a whole body: turn shows it once analysed
				return
			}
			stream, p = true, head
		}
		if len(p) > 0 {
			sc.Feed(p, 0)
			for ev, ok := sc.Next(); ok; ev, ok = sc.Next() {
				show(ev)
			}
		}
		if closed {
			for ev, ok := sc.Flush(); ok; ev, ok = sc.Flush() {
				show(ev)
			}
			d.done <- shown
			return
		}
	}
}
