package tracectx

import (
	"regexp"
	"testing"
)

func TestIndexInvertsTraceID(t *testing.T) {
	keys := []Key{NewKey("abc", 1, ""), NewKey("abc", 2, ""), NewKey("abc", 0, "run-7")}
	if keys[0] == keys[1] {
		t.Fatal("two runs of one plan share a key")
	}
	for _, k := range keys {
		for _, i := range []uint32{0, 1, 2, 1000, 1 << 31, 0xffffffff} {
			got, ok := k.Index(k.TraceID(i))
			if !ok || got != i {
				t.Fatalf("key %s: Index(TraceID(%d)) = %d, %v", k, i, got, ok)
			}
		}
		if _, ok := k.Index(keys[0].TraceID(5)); ok && k != keys[0] {
			t.Fatalf("key %s claims another run's trace id", k)
		}
	}
	if _, ok := (Key{}).Index([16]byte{1}); ok {
		t.Fatal("the zero key matched a trace id")
	}
}

func TestTraceparentShape(t *testing.T) {
	k := NewKey("plan", 42, "")
	re := regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)
	seen := map[string]bool{}
	for i := uint32(0); i < 1000; i++ {
		v := string(k.AppendTraceparent(nil, i))
		if len(v) != TraceparentLen || !re.MatchString(v) {
			t.Fatalf("traceparent %q", v)
		}
		if seen[v] {
			t.Fatalf("traceparent %q repeated", v)
		}
		seen[v] = true
	}
	p, err := ParseKey(k.String())
	if err != nil || p != k {
		t.Fatalf("ParseKey(String()) = %v, %v", p, err)
	}
}

func TestAppendTraceparentAllocatesNothing(t *testing.T) {
	k := NewKey("plan", 42, "")
	buf := make([]byte, 0, TraceparentLen)
	if n := testing.AllocsPerRun(100, func() { buf = k.AppendTraceparent(buf[:0], 7) }); n != 0 {
		t.Fatalf("%v allocations per traceparent", n)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), uint32(3))
	f.Fuzz(func(t *testing.T, key []byte, i uint32) {
		var k Key
		copy(k[:], key)
		if k.IsZero() {
			return
		}
		if got, ok := k.Index(k.TraceID(i)); (!ok || got != i) && k[0]|k[1]|k[2]|k[3]|k[4]|k[5]|k[6]|k[7] != 0 {
			t.Fatalf("Index(TraceID(%d)) = %d, %v", i, got, ok)
		}
	})
}
