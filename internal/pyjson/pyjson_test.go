package pyjson

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendPyFloat(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0.0", 20: "20.0", 20.6: "20.6", -3.5: "-3.5", 1e-5: "1e-05", 1.5e-7: "1.5e-07",
		1e16: "1e+16", 1.2345e20: "1.2345e+20", 0.0001: "0.0001", 123456789.125: "123456789.125",
		math.NaN(): "null", math.Inf(1): "null",
	} {
		if got := string(AppendFloat(nil, v)); got != want {
			t.Errorf("AppendFloat(%v) = %s; want %s", v, got, want)
		}
	}
}

// AppendNsAsMs must print exactly what AppendFloat prints for ns/1e6.
func TestAppendNsAsMs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := []int64{0, 1, 99, 100, 101, -50, -100, 5_000_000, 20_600_000, 999_999, 1_000_001, 1e14 + 7, 1e15, -1e15 - 1}
	for i := 0; i < 100000; i++ {
		vals = append(vals, r.Int64N(1e12)-1e11, r.Int64N(1e6))
	}
	for _, ns := range vals {
		want := string(AppendFloat(nil, float64(ns)/1e6))
		if got := string(AppendNsAsMs(nil, ns)); got != want {
			t.Fatalf("AppendNsAsMs(%d) = %s; want %s", ns, got, want)
		}
		if f, err := strconv.ParseFloat(want, 64); err != nil || f != float64(ns)/1e6 {
			t.Fatalf("%s does not round-trip %d", want, ns)
		}
	}
}

// The exports' layout is encoding/json's two-space indentation and their strings its
// escaping with HTML escaping off, byte for byte; only floats differ (Python's repr). The
// strings here are those the former escaper wrote differently (\u0008, \u000c, U+2028 and
// U+FFFD raw).
func TestMarshalIndentMatchesEncodingJSON(t *testing.T) {
	v := map[string]any{
		"error":  "server said \b\f\u2028\u2029 <&> \x01 \"q\" é \xff",
		"counts": []any{int64(1), uint64(2), int8(-3), true, nil, []any{}, map[string]any{}},
		"nested": map[string]any{"b": []string{"x", "y"}, "a": map[string]any{"k": "v"}},
	}
	got, err := MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	var std bytes.Buffer
	enc := json.NewEncoder(&std)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, std.Bytes()) {
		t.Errorf("MarshalIndent:\n%s\nencoding/json:\n%s", got, std.Bytes())
	}
}
