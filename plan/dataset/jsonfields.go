package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Strict JSON members, for the formats that refuse what they do not know (weka_trace,
// dag_jsonl): every error names the member.

// objectMembers decodes raw as a JSON object whose members are all in allowed.
func objectMembers(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, jsonError(json.Unmarshal(raw, new(any)))
		}
		return nil, errors.New("want a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, jsonError(err)
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown field %s (known: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return m, nil
}

// present reports whether member k is there and not null.
func present(m map[string]json.RawMessage, k string) bool {
	raw, ok := m[k]
	return ok && !isNull(raw)
}

// memberString decodes member k as a string; required fails when it is absent.
func memberString(m map[string]json.RawMessage, k string, required bool) (string, error) {
	if !present(m, k) {
		if required {
			return "", fmt.Errorf("%s: required", k)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m[k], &s); err != nil {
		return "", fmt.Errorf("%s: want a string", k)
	}
	return s, nil
}

// memberStrings decodes member k as a list of strings.
func memberStrings(m map[string]json.RawMessage, k string, required bool) ([]string, error) {
	if !present(m, k) {
		if required {
			return nil, fmt.Errorf("%s: required", k)
		}
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(m[k], &s); err != nil {
		return nil, fmt.Errorf("%s: want a list of strings", k)
	}
	return s, nil
}

// memberCount decodes member k as a whole number in [lo, hi]; absent gives def.
func memberCount(m map[string]json.RawMessage, k string, lo, hi, def int64, required bool) (int64, error) {
	if !present(m, k) {
		if required {
			return 0, fmt.Errorf("%s: required", k)
		}
		return def, nil
	}
	var n json.Number
	if err := json.Unmarshal(m[k], &n); err != nil {
		return 0, fmt.Errorf("%s: want a whole number", k)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, fmt.Errorf("%s %s: want a whole number", k, n)
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s %d: want a whole number in [%d, %d]", k, v, lo, hi)
	}
	return v, nil
}

// memberSeconds decodes member k as a finite number of seconds >= 0, in ns; NoTime when
// absent or null.
func memberSeconds(m map[string]json.RawMessage, k string, required bool) (int64, error) {
	if !present(m, k) {
		if required {
			return NoTime, fmt.Errorf("%s: required", k)
		}
		return NoTime, nil
	}
	var n json.Number
	if err := json.Unmarshal(m[k], &n); err != nil {
		return NoTime, fmt.Errorf("%s: want a number of seconds", k)
	}
	ns, err := secToNs(k, n)
	if err != nil {
		return NoTime, err
	}
	if ns > maxTraceNs {
		return NoTime, fmt.Errorf("%s %s: more than a year of seconds", k, n)
	}
	return ns, nil
}

// maxTraceNs bounds a recorded time (a year, the plan's span).
const maxTraceNs = 365 * 24 * 3600 * int64(1e9)

// memberList decodes member k as a JSON list.
func memberList(m map[string]json.RawMessage, k string, required bool) ([]json.RawMessage, error) {
	if !present(m, k) {
		if required {
			return nil, fmt.Errorf("%s: required", k)
		}
		return nil, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(m[k], &l); err != nil {
		return nil, fmt.Errorf("%s: want a list", k)
	}
	return l, nil
}
