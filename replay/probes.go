package replay

import (
	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/probe"
)

// probes are the readiness requests of o.WaitForModelMode for this plan (replay/probe).
func (r *Replay) probes() ([]probe.Readiness, error) {
	return probe.ReadinessRequests(r.opts.WaitForModelMode, r.plan.Meta(), r.opts.Plan)
}

// waitForModel waits, with o.WaitForModel > 0, until every URL answers the readiness probes
// (replay/probe); nothing of the plan is sent before it returns.
func (r *Replay) waitForModel() error {
	o := &r.opts
	if o.WaitForModel <= 0 {
		return nil
	}
	ps, err := r.probes()
	if err != nil {
		return err
	}
	headers, err := mergeHeaders(r.plan.Meta().Headers, o.Headers, o.APIKey)
	if err != nil {
		return err
	}
	tcfg, err := loadTLSConfig(o.TLSCAFile, o.TLSInsecureSkipVerify)
	if err != nil {
		return err
	}
	return probe.WaitForModel(r.stopReq, probe.WaitOptions{Mode: o.WaitForModelMode, Requests: ps, URLs: o.URLs, Headers: headers, TLS: tcfg,
		Timeout: o.WaitForModel, Interval: o.WaitForModelInterval, Notice: r.notice})
}

// runPreflight runs the preflight (replay/probe) against every URL with the plan's first
// request; the error refuses the run.
func (r *Replay) runPreflight() (*rawlog.Preflight, []int, error) {
	o := &r.opts
	m := r.plan.Meta()
	if r.plan.Len() == 0 {
		return nil, nil, nil
	}
	rec, body, err := r.plan.Record(0)
	if err != nil {
		return nil, nil, err
	}
	headers, err := mergeHeaders(m.Headers, o.Headers, o.APIKey)
	if err != nil {
		return nil, nil, err
	}
	tcfg, err := loadTLSConfig(o.TLSCAFile, o.TLSInsecureSkipVerify)
	if err != nil {
		return nil, nil, err
	}
	return probe.Preflight(r.stopReq, probe.PreflightOptions{URLs: o.URLs, Endpoint: m.Endpoint, Method: m.Method, Model: m.Model,
		Path: m.Paths[rec.PathID], Body: body, Headers: headers, TLS: tcfg, UserAgent: "llmbench-replay/" + o.ToolVersion,
		RequestTimeout: o.RequestTimeout, Notice: r.notice})
}
