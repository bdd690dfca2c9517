package jsonwire

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"
)

func TestAppendValue(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{1e21, `1e+21`},
		{1e-7, `1e-7`},
		{123456789.0, `123456789`},
		{0.1, `0.1`},
		{float32(0.1), `0.1`},
		{math.Copysign(0, -1), `-0`},
		{int64(-5), `-5`},
		{uint(7), `7`},
		{json.Number("1.5e3"), `1.5e3`},
		{json.RawMessage(`{ "a" : 1 }`), `{"a":1}`},
		{[]any{"a<b", true, map[string]any{"z": 1, "y": []any{}}}, `["a<b",true,{"y":[],"z":1}]`},
		{struct {
			A string `json:"a"`
		}{"<&>"}, `{"a":"<&>"}`},
		{map[string]int{"b": 1, "a": 2}, `{"a":2,"b":1}`},
	}
	for _, tc := range cases {
		got, err := AppendValue(nil, tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("AppendValue(%#v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
	if _, err := AppendValue(nil, json.Number("1.")); err == nil {
		t.Error("invalid json.Number accepted")
	}
	cyc := map[string]any{}
	cyc["self"] = cyc
	if _, err := AppendValue(nil, cyc); err == nil {
		t.Error("cyclic map accepted")
	}
	for _, f := range []float64{0, 1, -1, 1e-6, 9.999e-7, 1e20, 1e21, 3.14159, 1.0 / 3, -2.5e-300} {
		want, _ := json.Marshal(f)
		got, _ := AppendValue(nil, f)
		if string(got) != string(want) {
			t.Errorf("float %v: got %s want %s", f, got, want)
		}
	}
}

// ordered is an Object for the tests.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) Len() int                   { return len(o.keys) }
func (o *ordered) Member(i int) (string, any) { return o.keys[i], o.vals[i] }

// hexInt writes itself, as an Appender.
type hexInt int

func (h hexInt) AppendJSON(dst []byte) []byte {
	return strconv.AppendQuote(dst, "0x"+strconv.FormatInt(int64(h), 16))
}

type point struct {
	X, Y float64
	Tag  string `json:"tag"`
}

func TestEncoderIndent(t *testing.T) {
	e := Encoder{Indent: "  "}
	v := &ordered{
		keys: []string{"z", "a", "empty", "list", "nested", "custom", "struct", "float"},
		vals: []any{1, "x<y", map[string]any{}, []any{true, nil, []string{}}, map[string]any{"b": 2, "a": []string{"s"}}, hexInt(255), point{1, 2.5, "&"}, 0.5},
	}
	got, err := e.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "z": 1,
  "a": "x<y",
  "empty": {},
  "list": [
    true,
    null,
    []
  ],
  "nested": {
    "a": [
      "s"
    ],
    "b": 2
  },
  "custom": "0xff",
  "struct": {
    "X": 1,
    "Y": 2.5,
    "tag": "&"
  },
  "float": 0.5
}`
	if string(got) != want {
		t.Errorf("indented:\n%s\nwant:\n%s", got, want)
	}
	compact, err := AppendValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":"x<y","empty":{},"list":[true,null,[]],"nested":{"a":["s"],"b":2},"custom":"0xff","struct":{"X":1,"Y":2.5,"tag":"&"},"float":0.5}`; string(compact) != want {
		t.Errorf("compact:\n%s\nwant:\n%s", compact, want)
	}
}

func TestEncoderFloat(t *testing.T) {
	var sawBits []int
	e := Encoder{
		Float: func(dst []byte, f float64, bitSize int) ([]byte, error) {
			sawBits = append(sawBits, bitSize)
			if math.IsNaN(f) {
				return append(dst, "null"...), nil
			}
			return strconv.AppendFloat(dst, f, 'e', -1, bitSize), nil
		},
	}
	got, err := e.Append(nil, []any{1.5, float32(0.1), math.NaN(), []any{2.0, "t"}, struct{ A float64 }{3}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[1.5e+00,1e-01,null,[2e+00,"t"],{"A":3}]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if want := []int{64, 32, 64, 64}; !slices.Equal(sawBits, want) {
		t.Errorf("Float called with bit sizes %v, want %v", sawBits, want)
	}
	if _, err := AppendValue(nil, math.Inf(1)); err == nil {
		t.Error("the zero Encoder wrote +Inf")
	}
}
