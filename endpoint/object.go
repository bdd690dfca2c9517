package endpoint

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/llmbench/llmbench/internal/jsonwire"
)

// Request bodies are written by appending to the caller's buffer with internal/jsonwire, whose
// bytes equal encoding/json's with HTML escaping off (its package doc has the escaping rule),
// so bodies look exactly like what a Python or Go client sends.

// obj builds one JSON object, letting Extra override default members in place and appending
// the remaining Extra members in sorted key order. Its methods do nothing after an error.
type obj struct {
	b     []byte
	n     int            // members written
	extra map[string]any // nil when there is nothing to merge
	dkeys [16]string     // default keys written so far (to skip them when closing)
	nd    int
	err   error
}

func (o *obj) open(dst []byte, extra map[string]any) {
	o.b = append(dst, '{')
	if len(extra) > 0 {
		o.extra = extra
	}
}

// openModel is open with r's Extra followed by the "model" member, left out when r.Model is
// empty.
func (o *obj) openModel(dst []byte, r *Request) {
	o.open(dst, r.Extra)
	if r.Model != "" {
		o.str("model", r.Model)
	}
}

// key writes the member name and separator; it returns false when Extra overrides the key
// (the Extra value has then been written already) so the caller skips its default value.
func (o *obj) key(k string) bool {
	if o.err != nil {
		return false
	}
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = jsonwire.AppendString(o.b, k)
	o.b = append(o.b, ':')
	if o.extra != nil {
		if o.nd < len(o.dkeys) {
			o.dkeys[o.nd] = k
			o.nd++
		}
		if v, ok := o.extra[k]; ok {
			o.b, o.err = jsonwire.AppendValue(o.b, v)
			if o.err != nil {
				o.err = fmt.Errorf("extra input %q: %w", k, o.err)
			}
			return false
		}
	}
	return true
}

func (o *obj) str(k, v string) {
	if o.key(k) {
		o.b = jsonwire.AppendString(o.b, v)
	}
}

func (o *obj) int(k string, v int) {
	if o.key(k) {
		o.b = jsonwire.AppendInt(o.b, v)
	}
}

func (o *obj) bool(k string, v bool) {
	if o.key(k) {
		o.b = strconv.AppendBool(o.b, v)
	}
}

// close appends the Extra members that did not replace a default, sorted by key.
func (o *obj) close() ([]byte, error) {
	if o.err != nil {
		return o.b, o.err
	}
	if o.extra != nil {
		var stack [16]string
		for _, k := range jsonwire.SortedKeys(stack[:0], o.extra) {
			if slices.Contains(o.dkeys[:o.nd], k) {
				continue
			}
			if o.n > 0 {
				o.b = append(o.b, ',')
			}
			o.n++
			o.b = jsonwire.AppendString(o.b, k)
			o.b = append(o.b, ':')
			var err error
			if o.b, err = jsonwire.AppendValue(o.b, o.extra[k]); err != nil {
				return o.b, fmt.Errorf("extra input %q: %w", k, err)
			}
		}
	}
	return append(o.b, '}'), nil
}
