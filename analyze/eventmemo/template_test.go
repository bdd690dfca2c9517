package eventmemo

import (
	"reflect"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/endpoint"
)

// The event template stands in for ParseEvent, so it must reproduce every field of the Delta
// that parsing sets. A new field of endpoint.Delta fails this test until Template's Apply
// and parsesAsApplied account for it.
func TestEventTemplateComparesEveryDeltaField(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[endpoint.Delta]().Fields() {
		names = append(names, f.Name)
	}
	want := []string{"Content", "Reasoning", "Usage", "Done", "Items", "ErrorMsg", "EndMarker"}
	if !slices.Equal(names, want) {
		t.Fatalf("endpoint.Delta has fields %v; Template handles %v: update Apply and parsesAsApplied", names, want)
	}
}
