package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/replay/http1"
)

// Readiness probes (AIPerf's --wait-for-model-mode): what Run asks every URL before the
// run, until it answers 2xx.
const (
	WaitModels    = "models"    // GET <base>/v1/models
	WaitInference = "inference" // a one-token request of the plan's endpoint type, to its path
	WaitBoth      = "both"      // models, then inference
)

// DefaultWaitForModelInterval is the pause between two probes (Options.WaitForModelInterval).
const DefaultWaitForModelInterval = time.Second

// probeBodyLimit bounds what is read of a probe's response: only its status matters.
const probeBodyLimit = 1 << 20

// probe is one readiness request, the same for every URL but for the base.
type probe struct {
	method, path string
	body         []byte
}

// probes are the requests of o.WaitForModelMode for this plan; an inference probe needs an
// endpoint type that can render a request (not raw or template plans).
func (r *Replay) probes() ([]probe, error) {
	o := &r.opts
	var ps []probe
	if o.WaitForModelMode == WaitModels || o.WaitForModelMode == WaitBoth {
		ps = append(ps, probe{method: http.MethodGet, path: "/v1/models"})
	}
	if o.WaitForModelMode == WaitInference || o.WaitForModelMode == WaitBoth {
		m := r.plan.Meta()
		e, err := endpoint.Lookup(m.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("wait-for-model-mode %s: %w", o.WaitForModelMode, err)
		}
		body, err := e.Render(nil, &endpoint.Request{Model: m.Model, Prompt: "Hello", Messages: []endpoint.Message{{Role: "user", Content: "Hello"}},
			MaxTokens: 1, Streaming: m.Streaming, Query: "Hello", Passages: []string{"Hello"}})
		if err != nil {
			return nil, fmt.Errorf("wait-for-model-mode %s: plan %s has no probe request (%w): use %s", o.WaitForModelMode, o.Plan, err, WaitModels)
		}
		method := m.Method
		if method == "" {
			method = http.MethodPost
		}
		ps = append(ps, probe{method: method, path: m.Paths[0], body: body})
	}
	return ps, nil
}

// waitForModel polls every URL with the probes, every o.WaitForModelInterval, until each
// answers 2xx, for at most o.WaitForModel in all; nothing of the plan is sent before it
// returns. It says once how long the model took to answer; the error, when it never does
// (or Stop is called), names the URL, the probe and the last answer.
func (r *Replay) waitForModel() error {
	o := &r.opts
	if o.WaitForModel <= 0 {
		return nil
	}
	ps, err := r.probes()
	if err != nil {
		return err
	}
	headers, err := http1.MergeHeaders(r.plan.Meta().Headers, o.Headers, o.APIKey)
	if err != nil {
		return err
	}
	tcfg, err := http1.LoadTLSConfig(o.TLSCAFile, o.TLSInsecureSkipVerify)
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: tcfg, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(o.WaitForModel))
	defer cancel()
	go func() {
		select {
		case <-r.stopReq:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, base := range o.URLs {
		b, err := endpoint.ParseBase(base)
		if err != nil {
			return fmt.Errorf("url %q: %w", redactURL(base), err)
		}
		for _, p := range ps {
			target := b.URL(p.path)
			last := ""
			for {
				res := tryProbe(ctx, client, p, target, headers)
				if res == "" {
					break
				}
				if ctx.Err() == nil || last == "" {
					last = res // not the attempt the deadline cut short, when there was another
				}
				select {
				case <-ctx.Done():
				case <-time.After(o.WaitForModelInterval):
				}
				if ctx.Err() == nil {
					continue
				}
				what := fmt.Sprintf("%s %s", p.method, redactURL(target))
				select {
				case <-r.stopReq:
					return fmt.Errorf("wait for model: interrupted before %s answered (last: %s); nothing was sent", what, last)
				default:
				}
				return fmt.Errorf("wait for model: %s did not answer 2xx within %v (wait-for-model-timeout; last: %s); nothing was sent",
					what, o.WaitForModel, last)
			}
		}
	}
	r.notice(fmt.Sprintf("replay: the model answered (%s) after %v", o.WaitForModelMode, time.Since(start).Round(time.Millisecond)))
	return nil
}

// tryProbe sends one probe; "" means it was answered 2xx, else what happened instead.
func tryProbe(ctx context.Context, client *http.Client, p probe, target string, headers [][2]string) string {
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, target, body)
	if err != nil {
		return redactText(err.Error())
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
		return redactText(err.Error())
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// The server's own words say what it waits for ("Loading model").
		return "HTTP " + resp.Status + quoteMsg(redactText(endpoint.ErrorMessage(b)))
	}
	return ""
}
