package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"replay --api-key sk-1 --plan p", "replay --api-key REDACTED --plan p"},
		{"replay --api-key=sk-1", "replay --api-key=REDACTED"},
		{"replay --api-key-file /run/key --plan p", "replay --api-key-file /run/key --plan p"},
		{"replay -H Authorization:Bearer-x -H X-A:b", "replay -H Authorization: REDACTED -H X-A:b"},
		{"replay --header=x-api-key:k", "replay --header=x-api-key: REDACTED"},
		{"replay -Hcookie:a=b", "replay -Hcookie: REDACTED"},
		// Custom credential headers: any name with auth, token, key, secret or cookie in it.
		{"replay -H X-Custom-Token:s3cr3t", "replay -H X-Custom-Token: REDACTED"},
		{"replay -H x-upstream-AUTH:s3cr3t", "replay -H x-upstream-AUTH: REDACTED"},
		{"replay --header Client-Secret:s3cr3t", "replay --header Client-Secret: REDACTED"},
		{"replay -H=X-Session-Cookie:s3cr3t", "replay -H=X-Session-Cookie: REDACTED"},
		{"replay -H X-My-Key:s3cr3t -H Accept:text/event-stream", "replay -H X-My-Key: REDACTED -H Accept:text/event-stream"},
		// A body field under a secret's name (some servers take the key in the body).
		{"profile --extra-inputs api_key:sk-1 --extra-inputs ignore_eos:true", "profile --extra-inputs api_key:REDACTED --extra-inputs ignore_eos:true"},
		{`profile --extra-inputs={"ignore_eos":true,"x_token":"sk-1","n":2}`, `profile --extra-inputs={"ignore_eos":true,"x_token":"REDACTED","n":2}`},
		{"profile --extra-inputs max_tokens:100 --extra-inputs min_tokens:1", "profile --extra-inputs max_tokens:100 --extra-inputs min_tokens:1"},
		// One rule for every flag taking key=value or key:value pairs, lists of them too.
		{"profile --otel-resource-attributes api_key=sk-1", "profile --otel-resource-attributes api_key=REDACTED"},
		{"profile --otel-resource-attributes=service.name=x,auth_token=sk-1,env=prod", "profile --otel-resource-attributes=service.name=x,auth_token=REDACTED,env=prod"},
		{"profile --some-future-flag X-Secret:s3 --other=password=p", "profile --some-future-flag X-Secret:REDACTED --other=password=REDACTED"},
		{"profile --extra-inputs api_key=sk-1 --extra-inputs=client_secret:s", "profile --extra-inputs api_key=REDACTED --extra-inputs=client_secret:REDACTED"},
		{"profile --otel-resource-attributes service.name=llm,deployment.environment=prod", "profile --otel-resource-attributes service.name=llm,deployment.environment=prod"},
		// Metric names are no keys: their token is the model's.
		{"analyze --goodput time_to_first_token:400 --search-sla=time_to_first_token:p99:le:500 --fail-on-regression inter_token_latency:10",
			"analyze --goodput time_to_first_token:400 --search-sla=time_to_first_token:p99:le:500 --fail-on-regression inter_token_latency:10"},
		{"analyze --metric token_rate=osl/2 run", "analyze --metric token_rate=osl/2 run"},
		// A credential under a name no rule knows is still one by its scheme, or in a URL.
		{"replay -H X-Forward:Bearer_sk-abcdefgh12", "replay -H X-Forward:Bearer_sk-abcdefgh12"},
		{"replay -H=X-Callback:http://u:pw@h/", "replay -H=X-Callback:http://REDACTED@h/"},
		{"replay --url http://u:pw@h:1/", "replay --url http://REDACTED@h:1/"},
		{"replay -u=http://u:pw@h:1/", "replay -u=http://REDACTED@h:1/"},
		{"replay --url http://h:1/v1?api_key=s3cr3t&model=m", "replay --url http://h:1/v1?api_key=REDACTED&model=m"},
		{"replay --url=http://h/?Token=s3cr3t", "replay --url=http://h/?Token=REDACTED"},
		{"replay -uhttp://h/?x-auth=s3cr3t", "replay -uhttp://h/?x-auth=REDACTED"},
		{"replay --plan p", "replay --plan p"},
		{"replay -- --api-key s3cr3t", "replay -- --api-key s3cr3t"},
		// Metrics URLs take no scheme: "h:9400/metrics?token=t" is still a URL.
		{"replay --server-metrics-url h:9400/metrics?token=s3cr3t&x=1", "replay --server-metrics-url h:9400/metrics?token=REDACTED&x=1"},
		{"replay --server-metrics-url=u:pw@h:9400/metrics", "replay --server-metrics-url=REDACTED@h:9400/metrics"},
		{"replay --gpu-telemetry=h:9400/metrics?api_key=s3cr3t", "replay --gpu-telemetry=h:9400/metrics?api_key=REDACTED"},
		{"replay --server-metrics=h:1/m?sig=s3cr3t", "replay --server-metrics=h:1/m?sig=REDACTED"},
		// Optional values are only ever attached: a bare --gpu-telemetry takes nothing.
		{"replay --gpu-telemetry --url h:1/?key=s3cr3t", "replay --gpu-telemetry --url h:1/?key=REDACTED"},
	} {
		got := strings.Join(Args(strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
	if Args(nil) != nil {
		t.Error("Args(nil) is not nil")
	}
	// Fields cannot hold a space: the scheme forms, one argument each.
	for _, c := range []struct{ in, want string }{
		{"X-Forward: Bearer sk-abcdefgh12", "X-Forward: Bearer REDACTED"},
		{"X-Proxy: Basic dXNlcjpwYXNzd29yZA==", "X-Proxy: Basic REDACTED"},
		{"X-Trace: abc def", "X-Trace: abc def"},
	} {
		if got := Args([]string{"-H", c.in})[1]; got != c.want {
			t.Errorf("-H %q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "api-key": true,
		"Cookie": true, "Set-Cookie": true, "X-Custom-Token": true, "X-CUSTOM-TOKEN": true,
		"client_secret": true, " x-auth ": true, "password": true, "X-Amz-Signature": true,
		"sig": true, "SIG": true, "X-Sig": true, "urlSig": true, "X-Amz-Credential": true, "X-Amz-Security-Token": true,
		"X-Goog-Signature": true, "X-Goog-Credential": true, "AWSAccessKeyId": true, "Signature": true,
		"pwd": true, "passwd": true, "passphrase": true, "pass": true, "jwt": true, "code": true,
		"Content-Type": false, "Accept": false, "X-Session-Id": false, "model": false, "": false,
		"signal": false, "design": false, "X-Amz-Date": false, "X-Amz-Expires": false, "sv": false, "se": false, "sp": false,
		"bypass": false, "encoding": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v; want %v", name, got, want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"https://user:pw@h/v1", "https://REDACTED@h/v1"},
		{"https://user@h/v1", "https://REDACTED@h/v1"},
		{"http://h/v1?a=1&access_token=x%20y&b=2", "http://h/v1?a=1&access_token=REDACTED&b=2"},
		{"http://h/v1?API%5FKEY=x", "http://h/v1?API%5FKEY=REDACTED"},
		{"http://h/v1?flag&key", "http://h/v1?flag&key"},
		{"http://[bad@host", "http://REDACTED@host"},
		{"http://[bad", "http://[bad"},
		// Azure SAS, S3 and GCS presigned URLs.
		{"https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2026&sp=r&sig=abc%2Bdef%3D", "https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2026&sp=r&sig=REDACTED"},
		{"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F2026&X-Amz-Date=20261201T000000Z&X-Amz-Security-Token=tok&X-Amz-Signature=f00",
			"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20261201T000000Z&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED"},
		{"https://storage.googleapis.com/b/o?X-Goog-Credential=sa%40p&X-Goog-Signature=00ff", "https://storage.googleapis.com/b/o?X-Goog-Credential=REDACTED&X-Goog-Signature=REDACTED"},
		// No scheme, no path, ';' separators, fragments, a password holding '?' or '#'.
		{"h:9400?token=t", "h:9400?token=REDACTED"},
		{"u:pw@h:9400/metrics", "REDACTED@h:9400/metrics"},
		{"http://h/m?a=1;token=t", "http://h/m?a=1;token=REDACTED"},
		{"http://h/cb#access_token=t&state=s", "http://h/cb#access_token=REDACTED&state=s"},
		{"http://u:p?ss@h/x", "http://REDACTED@h/x"},
		{"http://u:p#ss@h/x", "http://REDACTED@h/x"},
		{"http://h/a@b?x=1", "http://h/a@b?x=1"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	if got := URLs([]string{"http://u:p@h/"}); len(got) != 1 || got[0] != "http://REDACTED@h/" {
		t.Errorf("URLs: %q", got)
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no url here", "no url here"},
		{"what? yes", "what? yes"},
		{`Get "http://h:1/metrics?token=s3cr3t&x=1": dial tcp: connection refused`, `Get "http://h:1/metrics?token=REDACTED&x=1": dial tcp: connection refused`},
		{"server metrics http://h/metrics?api_key=s3cr3t: 404.", "server metrics http://h/metrics?api_key=REDACTED: 404."},
		{`metrics URL "h:9400/m?sig=s3cr3t": no host`, `metrics URL "h:9400/m?sig=REDACTED": no host`},
		{"endpoint=https://u:pw@h/metrics", "endpoint=https://REDACTED@h/metrics"},
		{"a\thttp://u:p@h\n", "a\thttp://REDACTED@h\n"},
		{"(see http://h/?key=k)", "(see http://h/?key=REDACTED)"},
		{"\r progress 10/20 http://h:1", "\r progress 10/20 http://h:1"},
		// Only the secret's value goes: the parameters after it stay (Azure's api-version).
		{"http://h/v1?a=1&api_key=sk-X&b=2", "http://h/v1?a=1&api_key=REDACTED&b=2"},
		{"- http://h/v1?a=1&api_key=sk-XXXXXXXXXXXX&api-version=2024-06-01", "- http://h/v1?a=1&api_key=REDACTED&api-version=2024-06-01"},
		{"http://h/v1?api_key=sk-XXXXXXXXXXXX;b=2#api_key=sk-YYYYYYYYYYYY&c=3", "http://h/v1?api_key=REDACTED;b=2#api_key=REDACTED&c=3"},
		{"h:1/m?apikey=sk-XXXXXXXXXXXX&b=2", "h:1/m?apikey=REDACTED&b=2"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	in := "replay: server metrics http://h/metrics?token=s3cr3t: refused\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if want := "replay: server metrics http://h/metrics?token=REDACTED: refused\n"; b.String() != want {
		t.Errorf("wrote %q; want %q", b.String(), want)
	}
	if w.Unwrap() != &b {
		t.Error("Unwrap is not the underlying writer")
	}
}

// FuzzText: Text never panics, is idempotent, leaves text without a URL or a credential's
// marks alone, and no value of a secret-named parameter nor a bearer token survives it.
func FuzzText(f *testing.F) {
	for _, s := range []string{"http://h/?token=abc", "u:p@h:1?sig=x#code=y", "plain text", `Get "https://h/m?X-Amz-Signature=ff;a=b": x`, "?=&;#@://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if again := Text(got); again != got {
			t.Fatalf("Text not idempotent: %q -> %q -> %q", s, got, again)
		}
		lower := strings.ToLower(s)
		credential := false
		for _, w := range []string{"bearer", "basic", "auth", "key"} {
			credential = credential || strings.Contains(lower, w)
		}
		if !strings.Contains(s, "://") && !strings.ContainsAny(s, "?#") && !credential && got != s {
			t.Fatalf("Text(%q) = %q changed text without a URL or a credential", s, got)
		}
		const token = "zq9TOKENzq9"
		if echo := s + " Bearer " + token; strings.Contains(Text(echo), token) && !strings.Contains(s, token) {
			t.Fatalf("Text(%q) kept the bearer token", echo)
		}
		const secret = "zq9SECRETzq9"
		probe := "see http://h/m?token=" + secret + "&" + s
		if strings.Contains(Text(probe), secret) && !strings.Contains(s, secret) {
			t.Fatalf("Text(%q) kept the secret", probe)
		}
	})
}

// TestTextEchoedCredentials: a credential a server echoes back in prose (an error body
// quoting the header it refused) is hidden wherever the text goes: after "Bearer", after a
// base64 "Basic", after "Authorization:", "x-api-key:" or "api_key=", and every value the
// command registered (AddSecrets), wherever it occurs; prose, placeholders and short words
// are kept.
func TestTextEchoedCredentials(t *testing.T) {
	AddSecrets("HDRSECRET98765", "short", "  ")
	for _, c := range []struct{ in, want string }{
		{"invalid key: Bearer sk-SECRETAPIKEY123456 x-api-key= hdr=x", "invalid key: Bearer REDACTED x-api-key= hdr=x"},
		{`{"message":"bad Authorization: Bearer sk-abcdefgh1234"}`, `{"message":"bad Authorization: Bearer REDACTED"}`},
		{"authorization: bearer\tsk-abcdefgh1234, retry", "authorization: bearer\tREDACTED, retry"},
		{"Authorization: sk-abcdefgh1234", "Authorization: REDACTED"},
		{"invalid x-api-key: sk-ant-abcdefgh1234.", "invalid x-api-key: REDACTED."},
		{"api_key=sk-abcdefgh1234 rejected", "api_key=REDACTED rejected"},
		{"api_key=sk-abcdefgh1234&b=2 rejected", "api_key=REDACTED&b=2 rejected"},
		{"Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==", "Proxy-Authorization: Basic REDACTED"},
		// Any scheme after a credential header's name: its credential is the next word.
		{"Authorization: Token sk-abcdefgh1234 rejected", "Authorization: Token REDACTED rejected"},
		{"authorization=SSWS 00abcdefgh1234", "authorization=SSWS REDACTED"},
		{"the value HDRSECRET98765 is not allowed", "the value REDACTED is not allowed"},
		{"xHDRSECRET98765y", "xREDACTEDy"},
		// Kept: help text placeholders, prose, names inside other names, short values.
		{"sent as 'Authorization: Bearer KEY', or 'x-api-key: KEY'", "sent as 'Authorization: Bearer KEY', or 'x-api-key: KEY'"},
		{"basic metrics and a bearer of news", "basic metrics and a bearer of news"},
		{"Basic authentication required", "Basic authentication required"},
		{"--api-key string", "--api-key string"},
		{"monkey=banana12345 short", "monkey=banana12345 short"},
		{"Output Token Throughput: 1,234.00", "Output Token Throughput: 1,234.00"},
		{"Bearer REDACTED", "Bearer REDACTED"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
		if got := Text(c.want); got != c.want {
			t.Errorf("Text not idempotent on %q: %q", c.want, got)
		}
	}
}

// TestHeaderSecretsAndMask: the credentials of secret-named headers (whole, and after the
// scheme) are masked in place at their own length, every occurrence, longest first; other
// headers and short values are not secrets.
func TestHeaderSecretsAndMask(t *testing.T) {
	got := HeaderSecrets([][2]string{{"Authorization", "Bearer sk-abcdefgh12"}, {"X-Upstream-Token", " tok-0123456789 "},
		{"X-Custom", "visible-0123456789"}, {"Cookie", "short"}, {"X-Forward", "bearer fwd-0123456789"}})
	want := []string{"bearer fwd-0123456789", "Bearer sk-abcdefgh12", "tok-0123456789", "fwd-0123456789", "sk-abcdefgh12"}
	if !slices.Equal(got, want) {
		t.Fatalf("HeaderSecrets = %q; want %q", got, want)
	}
	var bs [][]byte
	for _, s := range got {
		bs = append(bs, []byte(s))
	}
	for _, c := range []struct{ in, want string }{
		{`{"error":"bad Authorization: Bearer sk-abcdefgh12"}`, `{"error":"bad Authorization: REDACTED************"}`},
		{`key sk-abcdefgh12 and sk-abcdefgh12`, `key REDACTED***** and REDACTED*****`},
		{`tok-0123456789`, `REDACTED******`},
		{`visible-0123456789 sk-abcdefgh1`, `visible-0123456789 sk-abcdefgh1`},
	} {
		b := []byte(c.in)
		masked := Mask(b, bs)
		if string(b) != c.want || masked != (c.in != c.want) || len(b) != len(c.in) {
			t.Errorf("Mask(%q) = %q, %v; want %q", c.in, b, masked, c.want)
		}
	}
	buf := []byte(`xx sk-abcdefgh12 yy tok-0123456789`)
	if n := testing.AllocsPerRun(100, func() { Mask(buf, bs) }); n != 0 {
		t.Errorf("Mask allocates %v times", n)
	}
}

// TestAddCredentials: the API key and the values of secret-named headers (with and
// without their scheme) are hidden wherever a server echoes them back, however it quotes
// them; other headers' values are not secrets.
func TestAddCredentials(t *testing.T) {
	AddCredentials("sk-apikey-0123456789", []string{"Authorization: Bearer hdr-token-0123456789", "X-Upstream-Secret: upstream-0123456789",
		"X-Custom: keep-this-0123456789"})
	for _, c := range []struct{ in, want string }{
		{"your key sk-apikey-0123456789 has expired", "your key REDACTED has expired"},
		{`{"token":"hdr-token-0123456789"}`, `{"token":"REDACTED"}`},
		{"header was upstream-0123456789", "header was REDACTED"},
		{"custom keep-this-0123456789", "custom keep-this-0123456789"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
