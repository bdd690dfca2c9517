package redact

import (
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
		{"replay --url http://u:pw@h:1/", "replay --url http://REDACTED@h:1/"},
		{"replay -u=http://u:pw@h:1/", "replay -u=http://REDACTED@h:1/"},
		{"replay --url http://h:1/v1?api_key=s3cr3t&model=m", "replay --url http://h:1/v1?api_key=REDACTED&model=m"},
		{"replay --url=http://h/?Token=s3cr3t", "replay --url=http://h/?Token=REDACTED"},
		{"replay -uhttp://h/?x-auth=s3cr3t", "replay -uhttp://h/?x-auth=REDACTED"},
		{"replay --plan p", "replay --plan p"},
		{"replay -- --api-key s3cr3t", "replay -- --api-key s3cr3t"},
	} {
		got := strings.Join(Args(strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
	if Args(nil) != nil {
		t.Error("Args(nil) is not nil")
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "api-key": true,
		"Cookie": true, "Set-Cookie": true, "X-Custom-Token": true, "X-CUSTOM-TOKEN": true,
		"client_secret": true, " x-auth ": true, "password": true, "X-Amz-Signature": true,
		"Content-Type": false, "Accept": false, "X-Session-Id": false, "model": false, "": false,
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
		{"http://[bad@host", Value},
		{"http://[bad", "http://[bad"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	if got := URLs([]string{"http://u:p@h/"}); len(got) != 1 || got[0] != "http://REDACTED@h/" {
		t.Errorf("URLs: %q", got)
	}
}
