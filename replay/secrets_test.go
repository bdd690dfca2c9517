package replay

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEchoedSecretsNeverLogged: a server that echoes the credentials it was sent (the API
// key and a secret-named header) in an error body or inside a 200 stream leaves none of them
// in the run's files, with either client; the body keeps its length, so its read ends hold.
func TestEchoedSecretsNeverLogged(t *testing.T) {
	const key, hdr = "sk-ECHOED-key-0123456789", "hdr-ECHOED-0123456789"
	for _, c := range []struct{ name, head, body string }{
		{"500", "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n", `{"error":{"message":"bad key %s, token %s"}}`},
		{"stream", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n", "data: {\"error\":{\"message\":\"key %s token %s\"}}\n\ndata: [DONE]\n\n"},
	} {
		for _, client := range []string{ClientLoop, ClientNet} {
			t.Run(c.name+"/"+client, func(t *testing.T) {
				url := hostileServer(t, true, func(conn net.Conn, br *bufio.Reader) {
					var auth, tok string
					for {
						l, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if l = strings.TrimRight(l, "\r\n"); l == "" {
							break
						}
						k, v, _ := strings.Cut(l, ":")
						switch strings.ToLower(k) {
						case "authorization":
							auth = strings.TrimSpace(v)
						case "x-upstream-token":
							tok = strings.TrimSpace(v)
						}
					}
					body := fmt.Sprintf(c.body, auth, tok)
					fmt.Fprintf(conn, "%sContent-Length: %d\r\nConnection: close\r\n\r\n%s", c.head, len(body), body)
				})
				ps := &planSpec{}
				ps.add(closedLoop, []byte(`{}`))
				ps.meta.Concurrency = 1
				o := testOptions(t, ps.write(t, t.TempDir()), url)
				o.Workers, o.Client, o.APIKey = 1, client, key
				o.Headers = []string{"X-Upstream-Token: " + hdr}
				r, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				m, _ := r.Run()
				if m == nil {
					t.Fatal("no run")
				}
				reqs := readRun(t, m, o.OutputDir)
				if q := reqs[0]; !bytes.Contains(q.Body, []byte("REDACTED")) || len(q.ReadEnd) == 0 || int(q.ReadEnd[len(q.ReadEnd)-1]) != len(q.Body) {
					t.Errorf("body %q, read ends %v: want the credentials masked at their length", q.Body, q.ReadEnd)
				}
				files, _ := filepath.Glob(filepath.Join(o.OutputDir, "*"))
				for _, f := range files {
					b, _ := os.ReadFile(f)
					for _, s := range []string{key, hdr, "ECHOED"} {
						if bytes.Contains(b, []byte(s)) {
							t.Errorf("%s holds %q", filepath.Base(f), s)
						}
					}
				}
			})
		}
	}
}
