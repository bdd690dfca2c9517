package http1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/redact"
)

// The workers''s HTTP/1.1 client. net/http costs allocations and goroutine hand-offs on every
// read and hides when each read returned; this client writes a pre-rendered head and the body
// straight from the plan mapping with one writev, then reads the socket into a fixed buffer,
// timestamping each read before parsing it. See BenchmarkReadPath for the comparison.

// DefaultMaxResponseBytes bounds what one request stores of its response (64 MiB) when
// Buffers.Init is given 0.
const DefaultMaxResponseBytes = 64 << 20

// Connection reuse strategies (AIPerf's --connection-reuse-strategy).
const (
	ReusePooled = "pooled"               // keep-alive connections shared by all requests of a worker
	ReuseNever  = "never"                // a new connection per request, "Connection: close"
	ReuseSticky = "sticky-user-sessions" // one connection per session, kept across its turns
)

// Target is one base URL and the request heads rendered for it, one per plan path.
type Target struct {
	scheme string
	Addr   string   // host:port to dial
	Host   string   // Host header / TLS server name
	Heads  [][]byte // by plan path id; each ends just before the Content-Length value
	TLS    *tls.Config
}

// HeadConfig is what goes into every request head.
type HeadConfig struct {
	Method    string
	Paths     []string
	Headers   [][2]string // fixed headers, in order, already merged and validated
	CloseConn bool        // send Connection: close (never strategy)
	UserAgent string
}

// NewTarget parses a base URL and renders its request heads. The head ends just before the
// Content-Length value, which is appended per request.
func NewTarget(raw string, hc *HeadConfig, tcfg *tls.Config) (*Target, error) {
	base, err := endpoint.ParseBase(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redact.URL(raw), err)
	}
	u, err := url.Parse(base.Origin()) // checked by ParseBase
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", redact.URL(raw), errors.Unwrap(err))
	}
	t := &Target{scheme: u.Scheme}
	t.Host = u.Host
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	t.Addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		c := tcfg.Clone()
		if c.ServerName == "" {
			c.ServerName = u.Hostname()
		}
		c.NextProtos = []string{"http/1.1"}
		t.TLS = c
	}
	for _, p := range hc.Paths {
		var b []byte
		b = append(b, hc.Method...)
		b = append(b, ' ')
		b = append(b, base.Target(p)...)
		b = append(b, " HTTP/1.1\r\nHost: "...)
		b = append(b, t.Host...)
		b = append(b, "\r\n"...)
		if hc.UserAgent != "" {
			b = append(b, "User-Agent: "...)
			b = append(b, hc.UserAgent...)
			b = append(b, "\r\n"...)
		}
		for _, h := range hc.Headers {
			b = append(b, h[0]...)
			b = append(b, ": "...)
			b = append(b, h[1]...)
			b = append(b, "\r\n"...)
		}
		if hc.CloseConn {
			b = append(b, "Connection: close\r\n"...)
		}
		b = append(b, "Content-Length: "...)
		t.Heads = append(t.Heads, b)
	}
	return t, nil
}

// MergeHeaders builds the fixed header list: the plan's headers, then the user's (-H, which
// replace a plan header of the same name), then the API key unless the user set that header:
// "Authorization: Bearer KEY", or "x-api-key: KEY" for Anthropic's Messages API (the headers
// carry anthropic-version: the plan's for anthropic_messages, or the user's for a raw or
// template plan aimed at it). Content-Type defaults to application/json. Hop-by-hop and
// framing headers are refused: the client owns them.
func MergeHeaders(plan map[string]string, user []string, apiKey string) ([][2]string, error) {
	type kv struct{ k, v string }
	var out []kv
	index := map[string]int{}
	set := func(k, v string) {
		lk := strings.ToLower(k)
		if i, ok := index[lk]; ok {
			out[i] = kv{k, v}
			return
		}
		index[lk] = len(out)
		out = append(out, kv{k, v})
	}
	keys := make([]string, 0, len(plan))
	for k := range plan {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := CheckHeader(k, plan[k]); err != nil {
			return nil, fmt.Errorf("plan header: %w", err)
		}
		set(k, plan[k])
	}
	for _, h := range user {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			// Never echo the value: a malformed credential header is still a credential.
			name, _, _ := strings.Cut(strings.TrimSpace(h), " ")
			return nil, fmt.Errorf("header starting %q: want 'Name: value'", strings.TrimSuffix(name, ":"))
		}
		if err := CheckHeader(k, v); err != nil {
			return nil, err
		}
		set(k, v)
	}
	if apiKey != "" {
		name, value := "Authorization", "Bearer "+apiKey
		if _, anthropic := index["anthropic-version"]; anthropic {
			name, value = "x-api-key", apiKey
		}
		if _, ok := index[strings.ToLower(name)]; !ok {
			if strings.ContainsAny(apiKey, "\r\n") {
				return nil, errors.New("API key contains a line break")
			}
			set(name, value)
		}
	}
	if _, ok := index["content-type"]; !ok {
		set("Content-Type", "application/json")
	}
	res := make([][2]string, len(out))
	for i, h := range out {
		res[i] = [2]string{h.k, h.v}
	}
	return res, nil
}

func CheckHeader(k, v string) error {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return fmt.Errorf("header name %q is not a valid token", k)
		}
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("header %s: value contains a line break", k)
	}
	switch strings.ToLower(k) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer":
		return fmt.Errorf("header %s is set by replay and cannot be given", k)
	}
	return nil
}

// LoadTLSConfig builds the client TLS configuration.
func LoadTLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	c := &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificates found", caFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// ResolveAddr resolves a target's host:port to the address both clients connect to: the
// first IPv4 answer when there is one, as the net dialer tries IPv4 first.
func ResolveAddr(hostport string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("target %s: %w", hostport, err)
	}
	ap, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || len(ap) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %v", host, err)
	}
	pn, err := net.LookupPort("tcp", port)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("target %s: %w", hostport, err)
	}
	a := ap[0].Unmap()
	for _, x := range ap {
		if x.Unmap().Is4() {
			a = x.Unmap()
			break
		}
	}
	return netip.AddrPortFrom(a, uint16(pn)), nil
}
