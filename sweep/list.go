package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseInts parses AIPerf's list syntax for an integer flag: "8" or "1,2,4,8". Every value
// must be a positive integer and none may repeat; the order is kept.
func ParseInts(s string) ([]int, error) {
	var out []int
	err := eachItem(s, func(item string) error {
		v, err := strconv.Atoi(item)
		if err != nil || v <= 0 {
			return fmt.Errorf("%q is not a positive integer", item)
		}
		for _, o := range out {
			if o == v {
				return fmt.Errorf("%d is listed twice", v)
			}
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// ParseFloats parses AIPerf's list syntax for a number flag: "10" or "5,10,20". Every value
// must be a positive finite number and none may repeat; the order is kept.
func ParseFloats(s string) ([]float64, error) {
	var out []float64
	err := eachItem(s, func(item string) error {
		v, err := strconv.ParseFloat(item, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%q is not a positive number", item)
		}
		for _, o := range out {
			if o == v {
				return fmt.Errorf("%s is listed twice", item)
			}
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// ParseList parses a list flag's values as numbers: ParseInts when integer (--concurrency),
// else ParseFloats (--request-rate), with their checks and messages.
func ParseList(s string, integer bool) ([]float64, error) {
	if !integer {
		return ParseFloats(s)
	}
	ints, err := ParseInts(s)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ints))
	for i, v := range ints {
		out[i] = float64(v)
	}
	return out, nil
}

// eachItem calls f on every comma-separated item of s, spaces trimmed; an empty item is an
// error.
func eachItem(s string, f func(string) error) error {
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return fmt.Errorf("%q: empty list item (want values separated by commas, e.g. 1,2,4)", s)
		}
		if err := f(item); err != nil {
			return err
		}
	}
	return nil
}
