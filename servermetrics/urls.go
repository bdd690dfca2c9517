package servermetrics

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/redact"
)

// DefaultInterval is AIPerf's server-metrics and GPU-telemetry scrape period.
const DefaultInterval = 333 * time.Millisecond

// DCGMPorts are the DCGM exporter ports AIPerf scrapes by default.
var DCGMPorts = []string{"9400", "9401"}

// NormalizeURL checks a metrics URL and completes it as AIPerf does: http:// when no scheme
// is given, /metrics when it has no path. Its errors show the URL redacted (package redact).
func NormalizeURL(s string) (string, error) {
	raw := strings.TrimSpace(s)
	shown := redact.URL(s)
	if raw == "" {
		return "", fmt.Errorf("metrics URL %q: empty", s)
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error holds the URL itself: say what is wrong without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("metrics URL %q: %w", shown, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("metrics URL %q: scheme must be http or https", shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("metrics URL %q: no host", shown)
	}
	if u.User != nil {
		return "", fmt.Errorf("metrics URL %q: credentials in the URL are not supported", shown)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}

// DefaultServerURLs are <scheme>://<host>/metrics of each base URL, once each: where vLLM,
// SGLang, TGI, Dynamo and Triton serve their metrics.
func DefaultServerURLs(bases []string) ([]string, error) {
	var out []string
	for _, b := range bases {
		u, err := parseBase(b)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, u.Scheme+"://"+u.Host+"/metrics")
	}
	return out, nil
}

// DefaultDCGMURLs are http://<host>:9400/metrics and :9401/metrics of each base URL's host.
func DefaultDCGMURLs(bases []string) ([]string, error) {
	var out []string
	for _, b := range bases {
		u, err := parseBase(b)
		if err != nil {
			return nil, err
		}
		for _, p := range DCGMPorts {
			out = appendNew(out, "http://"+net.JoinHostPort(u.Hostname(), p)+"/metrics")
		}
	}
	return out, nil
}

// parseBase parses a server's base URL as the requests do (endpoint.ParseBase): the metrics
// are at its host's root, whatever its path.
func parseBase(b string) (*url.URL, error) {
	base, err := endpoint.ParseBase(b)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", redact.URL(b), err)
	}
	return url.Parse(base.Origin())
}

// appendNew appends s unless out holds it already.
func appendNew(out []string, s string) []string {
	for _, x := range out {
		if x == s {
			return out
		}
	}
	return append(out, s)
}

// Merge returns a then b, each URL normalized and once.
func Merge(a, b []string) ([]string, error) {
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		n, err := NormalizeURL(s)
		if err != nil {
			return nil, err
		}
		out = appendNew(out, n)
	}
	return out, nil
}
