package rundir

import (
	"path/filepath"

	"github.com/llmbench/llmbench/rawlog"
)

// CheckShards checks the runs' shard identities (replay --shard-index/--shard-count,
// docs/distributed.md): none has one (one run, or several runs of one plan analysed
// together), or all do, with one count and run id and each index once. Missing shards are
// no error: analyze names them and analyses the rest.
func CheckShards(runs []Run) error {
	var first *Run
	for i := range runs {
		r := &runs[i]
		if (r.Manifest.Shard != nil) != (runs[0].Manifest.Shard != nil) {
			with, without := runs[0].Dir, r.Dir
			if r.Manifest.Shard != nil {
				with, without = r.Dir, runs[0].Dir
			}
			return Errorf("%s is a shard of a distributed run and %s is not: analyse a distributed run's shards on their own", with, without)
		}
		if r.Manifest.Shard != nil && first == nil {
			first = r
		}
	}
	if first == nil {
		return nil
	}
	count, id := first.Manifest.Shard.Count, first.Manifest.Shard.RunID
	byIndex := map[int]string{}
	for _, r := range runs {
		sh := r.Manifest.Shard
		where := filepath.Join(r.Dir, rawlog.ManifestName)
		switch {
		case sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count:
			return Errorf("%s: shard %d of %d is not a shard identity", where, sh.Index, sh.Count)
		case sh.Count != count:
			return Errorf("%s: shard %d of %d, but %s is a shard of %d: not one distributed run", where, sh.Index, sh.Count, first.Dir, count)
		case sh.RunID != id:
			return Errorf("%s: run id %q, but %s has %q: not one distributed run", where, sh.RunID, first.Dir, id)
		}
		if d, dup := byIndex[sh.Index]; dup {
			return Errorf("%s: shard %d is also %s: each shard must be given once", where, sh.Index, d)
		}
		byIndex[sh.Index] = r.Dir
	}
	return nil
}
