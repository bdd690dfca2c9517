package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/redact"
)

// Readiness probes (AIPerf's --wait-for-model-mode): what replay asks every URL before the
// run, until it answers 2xx.
const (
	WaitModels    = "models"    // GET <base>/v1/models
	WaitInference = "inference" // a one-token request of the plan's endpoint type, to its path
	WaitBoth      = "both"      // models, then inference
)

// DefaultWaitForModelInterval is the pause between two probes (replay.Options.WaitForModelInterval).
const DefaultWaitForModelInterval = time.Second

// probeBodyLimit bounds what is read of a probe's response: only its status matters.
const probeBodyLimit = 1 << 20

// Readiness is one readiness request, the same for every URL but for the base.
type Readiness struct {
	method, path string
	body         []byte
}

// ReadinessRequests are the requests of mode for a plan with meta m (its file plan, for the
// error); an inference probe needs an endpoint type that can render a request (not raw or
// template plans).
func ReadinessRequests(mode string, m *mmapds.Meta, plan string) ([]Readiness, error) {
	var ps []Readiness
	if mode == WaitModels || mode == WaitBoth {
		ps = append(ps, Readiness{method: http.MethodGet, path: "/v1/models"})
	}
	if mode == WaitInference || mode == WaitBoth {
		e, err := endpoint.Lookup(m.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("wait-for-model-mode %s: %w", mode, err)
		}
		body, err := e.Render(nil, &endpoint.Request{Model: m.Model, Prompt: "Hello", Messages: []endpoint.Message{{Role: "user", Content: "Hello"}},
			MaxTokens: 1, Streaming: m.Streaming, Query: "Hello", Passages: []string{"Hello"}})
		if err != nil {
			return nil, fmt.Errorf("wait-for-model-mode %s: plan %s has no probe request (%w): use %s", mode, plan, err, WaitModels)
		}
		method := m.Method
		if method == "" {
			method = http.MethodPost
		}
		ps = append(ps, Readiness{method: method, path: m.Paths[0], body: body})
	}
	return ps, nil
}

// WaitOptions say what WaitForModel asks, of which URLs, for how long.
type WaitOptions struct {
	// Mode names the probes (WaitModels, WaitInference, WaitBoth), Requests are they.
	Mode     string
	Requests []Readiness
	// URLs are the servers' base URLs; Headers the run's request headers, TLS its https
	// configuration.
	URLs    []string
	Headers [][2]string
	TLS     *tls.Config
	// Timeout bounds the whole wait, Interval the pause between two probes.
	Timeout, Interval time.Duration
	// Notice takes the line saying how long the model took to answer.
	Notice func(string)
}

// WaitForModel polls every URL with the probes, every o.Interval, until each answers 2xx,
// for at most o.Timeout in all; nothing of the plan is sent before it returns. It says once
// how long the model took to answer; the error, when it never does (or stop is closed),
// names the URL, the probe and the last answer.
func WaitForModel(stop <-chan struct{}, o WaitOptions) error {
	tr := &http.Transport{TLSClientConfig: o.TLS, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(o.Timeout))
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, base := range o.URLs {
		b, err := endpoint.ParseBase(base)
		if err != nil {
			return fmt.Errorf("url %q: %w", redact.URL(base), err)
		}
		for _, p := range o.Requests {
			target := b.URL(p.path)
			last := ""
			for {
				res := tryReadiness(ctx, client, p, target, o.Headers)
				if res == "" {
					break
				}
				if ctx.Err() == nil || last == "" {
					last = res // not the attempt the deadline cut short, when there was another
				}
				select {
				case <-ctx.Done():
				case <-time.After(o.Interval):
				}
				if ctx.Err() == nil {
					continue
				}
				what := fmt.Sprintf("%s %s", p.method, redact.URL(target))
				select {
				case <-stop:
					return fmt.Errorf("wait for model: interrupted before %s answered (last: %s); nothing was sent", what, last)
				default:
				}
				return fmt.Errorf("wait for model: %s did not answer 2xx within %v (wait-for-model-timeout; last: %s); nothing was sent",
					what, o.Timeout, last)
			}
		}
	}
	o.Notice(fmt.Sprintf("replay: the model answered (%s) after %v", o.Mode, time.Since(start).Round(time.Millisecond)))
	return nil
}

// tryReadiness sends one probe; "" means it was answered 2xx, else what happened instead.
func tryReadiness(ctx context.Context, client *http.Client, p Readiness, target string, headers [][2]string) string {
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, target, body)
	if err != nil {
		return redact.Text(err.Error())
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named by the caller, redacted
		}
		return redact.Text(err.Error())
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// The server's own words say what it waits for ("Loading model").
		return "HTTP " + resp.Status + quoteMsg(redact.Text(endpoint.ErrorMessage(b)))
	}
	return ""
}
