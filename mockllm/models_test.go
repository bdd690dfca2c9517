package mockllm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// The model name is written as encoding/json writes it (HTML escaping off), byte for byte:
// \b and \f as short escapes and U+2028 escaped, as every string the mock writes.
func TestModelsNameEscaping(t *testing.T) {
	o := testOptions()
	o.Model = "m\b\f\u2028<&>\x01\"é"
	base := startServer(t, o)
	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var std bytes.Buffer
	enc := json.NewEncoder(&std)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o.Model); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(`{"object":"list","data":[{"id":`), bytes.TrimSuffix(std.Bytes(), []byte("\n"))...)
	if !bytes.HasPrefix(body, want) {
		t.Errorf("models body\n%s\nwant it to start with\n%s", body, want)
	}
	if got := path(jsonOf(t, string(body)), "data.0.id"); got != o.Model {
		t.Errorf("model name decodes to %q, want %q", got, o.Model)
	}
}
