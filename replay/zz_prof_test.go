package replay

import (
	"os"
	"testing"
	"time"

	"github.com/llmbench/llmbench/mmapds"
)

func TestZZProfile(t *testing.T) {
	url := os.Getenv("ZZ_URL")
	if url == "" {
		t.Skip()
	}
	ps := &planSpec{}
	for k := 0; k < 128; k++ {
		ps.add(mmapds.Record{SendOffsetNs: mmapds.NoSendOffset, DelayNs: -1, Session: uint32(k), Phase: mmapds.PhaseProfile}, chatBody(128))
	}
	ps.meta.Concurrency = 16
	plan := ps.write(t, t.TempDir())
	u0, s0 := cpuTime()
	res, reqs, _ := runInProcess(t, workerConfig{Plan: plan, URLs: []string{url}, RequestTimeoutNs: int64(time.Minute)}, nil)
	u1, s1 := cpuTime()
	reads := 0
	for _, q := range reqs {
		reads += len(q.ReadNs)
	}
	t.Logf("%+v reads %d cpu user %v sys %v per read %v", res.Counts, reads, time.Duration(u1-u0), time.Duration(s1-s0), time.Duration((u1-u0+s1-s0)/int64(reads)))
}
