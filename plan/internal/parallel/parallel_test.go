package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestIndexed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, workers int
		fail       []int // indices whose f fails
		wantErr    int   // index named by the error; -1 = nil
	}{
		{"empty", 0, 4, nil, -1},
		{"one goroutine", 50, 1, nil, -1},
		{"default workers", 1000, 0, nil, -1},
		{"more workers than work", 3, 16, nil, -1},
		{"lowest failure wins", 1000, 8, []int{999, 500, 7, 640}, 7},
		{"sequential stops at first", 100, 1, []int{40, 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fails := map[int]bool{}
			for _, i := range tc.fail {
				fails[i] = true
			}
			hits := make([]atomic.Int32, tc.n)
			err := Indexed(tc.n, tc.workers, func(i int) error {
				hits[i].Add(1)
				if fails[i] {
					return fmt.Errorf("index %d", i)
				}
				return nil
			})
			if tc.wantErr < 0 {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				for i := range hits {
					if h := hits[i].Load(); h != 1 {
						t.Fatalf("f(%d) ran %d times, want 1", i, h)
					}
				}
				return
			}
			if want := fmt.Sprintf("index %d", tc.wantErr); err == nil || err.Error() != want {
				t.Fatalf("err = %v, want %q", err, want)
			}
		})
	}
}

func TestIndexedReturnsCallersError(t *testing.T) {
	sentinel := errors.New("sentinel")
	if err := Indexed(10, 4, func(i int) error {
		if i == 5 {
			return sentinel
		}
		return nil
	}); !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want the sentinel", err)
	}
}
