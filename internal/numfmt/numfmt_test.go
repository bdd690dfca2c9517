package numfmt

import (
	"math"
	"testing"
)

var cases = []struct {
	V    float64
	Want string
}{
	{0, "0"},
	{math.Copysign(0, -1), "0"},
	{1, "1"},
	{1.5, "1.5"},
	{12.3456, "12.35"},
	{123.456, "123.5"},
	{1234.56, "1,235"},
	{12345.678, "12,346"},
	{-12345.678, "-12,346"},
	{1e15, "1,000,000,000,000,000"},
	{1e20, "100,000,000,000,000,000,000"},
	{0.097, "0.097"},
	{-1.373e-4, "-0.0001373"},
	{-1.373e-3, "-0.001373"},
	{6.1e-9, "0.0000000061"},
	{1e-13, "0"},
	{-1e-13, "0"},
	{0.5, "0.5"},
	{999.94, "999.9"},
	{999.96, "1,000"},
	{99.996, "100"},
	{math.NaN(), "–"},
	{math.Inf(1), "+Inf"},
	{math.Inf(-1), "-Inf"},
}

func TestFormat(t *testing.T) {
	for _, c := range cases {
		if got := Format(c.V); got != c.Want {
			t.Errorf("Format(%v) = %q, want %q", c.V, got, c.Want)
		}
	}
}

func TestSignedPercentP(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{Signed(0.01), "+0.01"},
		{Signed(-12.3), "-12.3"},
		{Signed(0), "0"},
		{Signed(1e-14), "0"},
		{Percent(0.0137), "+0.0137 %"},
		{Percent(-1.373e-3), "-0.001373 %"},
		{Percent(12.3456), "+12.35 %"},
		{Percent(math.Inf(1)), "+Inf %"},
		{Percent(math.NaN()), "–"},
		{P(6.1e-9), "< 0.0001"},
		{P(0.002), "= 0.002"},
		{P(0.0473), "= 0.047"},
		{P(0.21), "= 0.21"},
		{P(1), "= 1"},
		{P(0), "< 0.0001"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
