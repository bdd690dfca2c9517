package metricexpr

import (
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/endpoint"
)

// The request's lists and its usage block as CEL values that read the view in place: each
// is one pointer (so making one allocates nothing), indexing reads the view's own slices, and
// only the rare operations that need a whole list or map (equality, conversion, iteration,
// concatenation) build one.

// source is what a list reads: its length and element i of the view.
type source interface {
	n(v *analyze.RequestView) int
	at(v *analyze.RequestView, i int) ref.Val
}

// chunks: each content event's arrival in ms since the write began.
type chunks struct{}

func (chunks) n(v *analyze.RequestView) int { return v.ContentEvents() }
func (chunks) at(v *analyze.RequestView, i int) ref.Val {
	return types.Double(float64(v.ContentNs(i)) / 1e6)
}

// gaps: the inter-chunk gaps in ms.
type gaps struct{}

func (gaps) n(v *analyze.RequestView) int { return len(v.GapsNs()) }
func (gaps) at(v *analyze.RequestView, i int) ref.Val {
	return types.Double(float64(v.GapsNs()[i]) / 1e6)
}

// reads: per read that completed content events, how many it completed.
type reads struct{}

func (reads) n(v *analyze.RequestView) int { return len(v.EventsPerRead()) }
func (reads) at(v *analyze.RequestView, i int) ref.Val {
	return types.Int(v.EventsPerRead()[i])
}

// list is a CEL list over one of the view's lists.
type list[S source] struct{ v *analyze.RequestView }

var _ traits.Lister = list[chunks]{}

func (l list[S]) size() int {
	var s S
	return s.n(l.v)
}

// whole builds the list as an ordinary CEL list.
func (l list[S]) whole() traits.Lister {
	var s S
	n := s.n(l.v)
	elems := make([]ref.Val, n)
	for i := range elems {
		elems[i] = s.at(l.v, i)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems)
}

// Get implements traits.Indexer: an index out of range is an error, so the request has no
// value.
func (l list[S]) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	var s S
	if n := s.n(l.v); i < 0 || i >= n {
		return types.NewErr("index '%d' out of range in list size '%d'", i, n)
	}
	return s.at(l.v, i)
}

// Size implements traits.Sizer.
func (l list[S]) Size() ref.Val { return types.Int(l.size()) }

// Contains implements traits.Container.
func (l list[S]) Contains(elem ref.Val) ref.Val {
	var s S
	for i, n := 0, s.n(l.v); i < n; i++ {
		if types.Equal(elem, s.at(l.v, i)) == types.True {
			return types.True
		}
	}
	return types.False
}

// Add implements traits.Adder.
func (l list[S]) Add(other ref.Val) ref.Val { return l.whole().Add(other) }

// Iterator implements traits.Iterable.
func (l list[S]) Iterator() traits.Iterator { return l.whole().Iterator() }

// ConvertToNative implements ref.Val.
func (l list[S]) ConvertToNative(t reflect.Type) (any, error) { return l.whole().ConvertToNative(t) }

// ConvertToType implements ref.Val.
func (l list[S]) ConvertToType(t ref.Type) ref.Val { return l.whole().ConvertToType(t) }

// Equal implements ref.Val.
func (l list[S]) Equal(other ref.Val) ref.Val { return l.whole().Equal(other) }

// Type implements ref.Val.
func (l list[S]) Type() ref.Type { return types.ListType }

// Value implements ref.Val.
func (l list[S]) Value() any { return l.whole().Value() }

// usageFields are the usage block's fields, as the server names them.
var usageFields = [...]struct {
	name string
	bit  endpoint.UsageField
	get  func(*endpoint.Usage) int
}{
	{"prompt_tokens", endpoint.UsagePrompt, func(u *endpoint.Usage) int { return u.PromptTokens }},
	{"completion_tokens", endpoint.UsageCompletion, func(u *endpoint.Usage) int { return u.CompletionTokens }},
	{"total_tokens", endpoint.UsageTotal, func(u *endpoint.Usage) int { return u.TotalTokens }},
	{"reasoning_tokens", endpoint.UsageReasoning, func(u *endpoint.Usage) int { return u.ReasoningTokens }},
	{"cached_prompt_tokens", endpoint.UsageCachedPrompt, func(u *endpoint.Usage) int { return u.CachedPromptTokens }},
}

// usage is the request's usage block as a CEL map of the fields the server sent, each count
// a double (as every count of the variables: numbers mix in arithmetic, vars.go).
type usage struct{ v *analyze.RequestView }

var _ traits.Mapper = usage{}

// Find implements traits.Mapper.
func (u usage) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	us := u.v.Usage()
	for _, f := range usageFields {
		if f.name == string(k) {
			if us.Has&f.bit == 0 {
				return nil, false
			}
			return types.Double(f.get(&us)), true
		}
	}
	return nil, false
}

// whole builds the map as an ordinary CEL map.
func (u usage) whole() traits.Mapper {
	us := u.v.Usage()
	m := map[string]float64{}
	for _, f := range usageFields {
		if us.Has&f.bit != 0 {
			m[f.name] = float64(f.get(&us))
		}
	}
	return types.DefaultTypeAdapter.NativeToValue(m).(traits.Mapper)
}

// Get implements traits.Indexer: a field the server did not send is an error.
func (u usage) Get(key ref.Val) ref.Val {
	if v, ok := u.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

// Contains implements traits.Container.
func (u usage) Contains(key ref.Val) ref.Val {
	_, ok := u.Find(key)
	return types.Bool(ok)
}

// Size implements traits.Sizer.
func (u usage) Size() ref.Val {
	us := u.v.Usage()
	n := 0
	for _, f := range usageFields {
		if us.Has&f.bit != 0 {
			n++
		}
	}
	return types.Int(n)
}

// Iterator implements traits.Iterable.
func (u usage) Iterator() traits.Iterator { return u.whole().Iterator() }

// ConvertToNative implements ref.Val.
func (u usage) ConvertToNative(t reflect.Type) (any, error) { return u.whole().ConvertToNative(t) }

// ConvertToType implements ref.Val.
func (u usage) ConvertToType(t ref.Type) ref.Val { return u.whole().ConvertToType(t) }

// Equal implements ref.Val.
func (u usage) Equal(other ref.Val) ref.Val { return u.whole().Equal(other) }

// Type implements ref.Val.
func (u usage) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (u usage) Value() any { return u.whole().Value() }
