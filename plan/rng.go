package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
)

// Stream returns the random stream of one named component: a PCG generator seeded from
// SHA-256("seed:component") (AIPerf's rng.derive scheme). Each component draws only from its
// own stream, so adding a component, or drawing more from one, never shifts another's
// values; and the streams depend only on the seed, never on GOMAXPROCS or timing.
func Stream(seed uint64, component string) *rand.Rand {
	sum := sha256.Sum256([]byte(strconv.FormatUint(seed, 10) + ":" + component))
	le := binary.LittleEndian
	return rand.New(rand.NewPCG(le.Uint64(sum[0:8]), le.Uint64(sum[8:16])))
}

// Streams binds Stream to one seed, the shape dataset.SyntheticOptions.Stream wants.
func Streams(seed uint64) func(component string) *rand.Rand {
	return func(component string) *rand.Rand { return Stream(seed, component) }
}
