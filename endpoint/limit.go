package endpoint

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// The output limit a request body asks for, read and rewritten for the checks that a server
// honours it: replay's preflight asks for 2 tokens with the plan's own body, and analyze
// names the field when nearly every output overran the requested length.

// LimitFields are the output-limit members a request body may carry, as the APIs name them:
// chat's max_completion_tokens and its legacy max_tokens (also completions' and the
// Messages API's), the Responses API's max_output_tokens, and TGI's max_new_tokens inside its
// parameters object.
var LimitFields = []string{"max_completion_tokens", "max_tokens", "max_output_tokens", "parameters.max_new_tokens"}

// limitParent is the object holding a nested limit member (TGI's parameters).
const limitParent = "parameters"

// BoundFields are the members bound to the output limit: a server refuses a body whose
// minimum output length is above its limit (vLLM and SGLang: min_tokens <= max_tokens;
// TGI and HuggingFace generate: parameters.min_new_tokens). SetLimit lowers each to the new
// limit when it is above it, so that the body it writes stays one the server accepts.
var BoundFields = []string{"min_tokens", "min_new_tokens", "min_completion_tokens", "min_output_tokens",
	"parameters.min_new_tokens", "parameters.min_tokens"}

// isBoundKey says whether key, at the top (nested false) or inside limitParent, is one of
// BoundFields.
func isBoundKey(key []byte, nested bool) bool {
	switch string(key) {
	case "min_tokens", "min_new_tokens":
		return true
	case "min_completion_tokens", "min_output_tokens":
		return !nested
	}
	return false
}

// appendBound appends raw, a bound member's value, to dst: n when raw is a number above n,
// else raw as it is (a value the server would refuse anyway is not SetLimit's to mend).
func appendBound(dst, raw []byte, n int) []byte {
	if v, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64); err == nil && v > float64(n) {
		return jsonwire.AppendInt(dst, n)
	}
	return append(dst, raw...)
}

// isLimitKey says whether key, in an object at depth 0 (top) or inside limitParent (nested),
// is an output-limit member.
func isLimitKey(key []byte, nested bool) bool {
	if nested {
		return string(key) == "max_new_tokens"
	}
	switch string(key) {
	case "max_completion_tokens", "max_tokens", "max_output_tokens":
		return true
	}
	return false
}

// LimitField returns the output-limit member body sets (the first found, top level before
// parameters.max_new_tokens) and its value; ok is false when body is not a JSON object or
// sets no limit.
func LimitField(body []byte) (field string, n int, ok bool) {
	s := jsonwire.NewScanner(body)
	if !s.EnterObject() {
		return "", 0, false
	}
	nested := ""
	nestedN := 0
	for m := 0; ; {
		key, more := s.Member(&m)
		if !more {
			break
		}
		switch {
		case isLimitKey(key, false):
			v, isInt := s.Int()
			if isInt && s.Err() == nil {
				return string(key), v, true
			}
		case string(key) == limitParent && s.Peek() == '{':
			s.EnterObject()
			for k := 0; ; {
				inner, more := s.Member(&k)
				if !more {
					break
				}
				if nested == "" && isLimitKey(inner, true) {
					if v, isInt := s.Int(); isInt {
						nested, nestedN = limitParent+"."+string(inner), v
					}
					continue
				}
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
	if s.Err() != nil || nested == "" {
		return "", 0, false
	}
	return nested, nestedN, true
}

// errNotObject is SetLimit's error for a body that is not a JSON object.
var errNotObject = errors.New("endpoint: the request body is not a JSON object")

// SetLimit appends to dst body, a JSON object, with its output limit set to n under field
// (one of LimitFields): every other limit member is dropped, so the server sees exactly one,
// and every member of BoundFields above n is lowered to n (min_tokens: 128 with a limit of 2
// is a body vLLM refuses). The other members keep their order and values, written compactly;
// the limit member takes the place of the first one dropped, or comes first.
func SetLimit(dst, body []byte, field string, n int) ([]byte, error) {
	parent, leaf, nestedField := strings.Cut(field, ".")
	if !nestedField {
		leaf, parent = parent, ""
	}
	s := jsonwire.NewScanner(body)
	if !s.EnterObject() {
		return dst, errNotObject
	}
	start := len(dst)
	dst = append(dst, '{')
	written, placed := 0, false
	member := func(key []byte) {
		if written > 0 {
			dst = append(dst, ',')
		}
		written++
		dst = jsonwire.AppendString(dst, key)
		dst = append(dst, ':')
	}
	limit := func() {
		member([]byte(leaf))
		dst = jsonwire.AppendInt(dst, n)
		placed = true
	}
	sawParent := false
	for m := 0; ; {
		key, more := s.Member(&m)
		if !more {
			break
		}
		switch {
		case isLimitKey(key, false):
			s.Skip()
			if parent == "" && !placed {
				limit()
			}
		case string(key) == limitParent && s.Peek() == '{':
			sawParent = true
			member(key)
			var err error
			if dst, err = setNested(dst, &s, leaf, n, parent != ""); err != nil {
				return dst[:start], err
			}
		case isBoundKey(key, false):
			member(key)
			dst = appendBound(dst, s.Raw(), n)
		default:
			member(key)
			dst = append(dst, s.Raw()...)
		}
	}
	if s.Err() != nil {
		return dst[:start], s.Err()
	}
	if s.End(); s.Err() != nil {
		return dst[:start], s.Err()
	}
	switch {
	case parent != "" && !sawParent:
		member([]byte(parent))
		dst = append(dst, '{')
		dst = jsonwire.AppendString(dst, leaf)
		dst = append(dst, ':')
		dst = jsonwire.AppendInt(dst, n)
		dst = append(dst, '}')
	case parent == "" && !placed:
		// No limit member was there: it goes first.
		rest := append([]byte(nil), dst[start+1:]...)
		dst = append(dst[:start+1], jsonwire.AppendString(nil, leaf)...)
		dst = append(dst, ':')
		dst = jsonwire.AppendInt(dst, n)
		if len(rest) > 0 {
			dst = append(dst, ',')
			dst = append(dst, rest...)
		}
	}
	return append(dst, '}'), nil
}

// setNested copies the parameters object s is at into dst without its limit members, its
// bound members lowered to n, with leaf set to n when set says so.
func setNested(dst []byte, s *jsonwire.Scanner, leaf string, n int, set bool) ([]byte, error) {
	s.EnterObject()
	dst = append(dst, '{')
	written := 0
	sep := func() {
		if written > 0 {
			dst = append(dst, ',')
		}
		written++
	}
	if set {
		sep()
		dst = jsonwire.AppendString(dst, leaf)
		dst = append(dst, ':')
		dst = jsonwire.AppendInt(dst, n)
	}
	for m := 0; ; {
		key, more := s.Member(&m)
		if !more {
			break
		}
		if isLimitKey(key, true) {
			s.Skip()
			continue
		}
		sep()
		dst = jsonwire.AppendString(dst, key)
		dst = append(dst, ':')
		if isBoundKey(key, true) {
			dst = appendBound(dst, s.Raw(), n)
		} else {
			dst = append(dst, s.Raw()...)
		}
	}
	if s.Err() != nil {
		return dst, s.Err()
	}
	return append(dst, '}'), nil
}
