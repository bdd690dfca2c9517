package plan

import (
	"strings"
	"testing"
)

// TestApplyLift: AIPerf's payload_template and response_field extra inputs move onto their
// flags (out of the body members), again without complaint on a second Apply with the same
// value, and are refused beside a different value given on the command line.
func TestApplyLift(t *testing.T) {
	none := func(string) bool { return false }
	f, _ := newTestFlags()
	f.O.EndpointType = "template"
	f.ExtraInputs = []string{"payload_template:{\"a\": 1}", "response_field:text", "temperature:0.5"}
	for i := 0; i < 2; i++ {
		o := f.O
		if err := f.Apply(&o, none); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
		if f.PayloadTemplate != `{"a":1}` || f.O.ResponseField != "text" || len(o.ExtraInputs) != 1 || o.ExtraInputs["temperature"] == nil {
			t.Fatalf("apply %d: template %q, field %q, extra %v", i, f.PayloadTemplate, f.O.ResponseField, o.ExtraInputs)
		}
	}
	g, _ := newTestFlags()
	g.O.EndpointType, g.O.ResponseField = "raw", "choices.0.text"
	g.ExtraInputs = []string{"response_field:text"}
	o := g.O
	err := g.Apply(&o, func(name string) bool { return name == "response-field" })
	if err == nil || !strings.Contains(err.Error(), "--response-field and --extra-inputs response_field are both given") {
		t.Fatalf("a different --response-field: %v", err)
	}
	h, _ := newTestFlags()
	o = h.O
	if err := h.Apply(&o, func(name string) bool { return name == "isl-block-size" }); err == nil || err.Error() != "--isl-block-size needs --input-file" {
		t.Fatalf("--isl-block-size without --input-file: %v", err)
	}
}
