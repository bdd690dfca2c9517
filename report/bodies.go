package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/llmbench/llmbench/mmapds"
)

// bodiesHash is the SHA-256 of what a plan sends, without when it sends it: every record's
// path and body, in plan order. Two plans of one sweep differ by design in their schedule
// (concurrency, request rate, the instants drawn from it) and so in their plan hash; they
// should not differ in this hash. The plan is read whole (its bodies), once per run compared.
func bodiesHash(planPath string) (string, error) {
	if planPath == "" {
		return "", fmt.Errorf("the run names no plan")
	}
	p, err := mmapds.Open(planPath, mmapds.Options{SkipHash: true})
	if err != nil {
		return "", err
	}
	defer p.Close()
	h := sha256.New()
	var n [8]byte
	for i := range p.Len() {
		r, body, err := p.Record(i)
		if err != nil {
			return "", err
		}
		path := p.Meta().Paths[r.PathID]
		binary.LittleEndian.PutUint64(n[:], uint64(len(path)))
		h.Write(n[:])
		h.Write([]byte(path))
		binary.LittleEndian.PutUint64(n[:], uint64(len(body)))
		h.Write(n[:])
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
