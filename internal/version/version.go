// Package version says which build of llmbench is running: one string for every command's
// --version, run.json and the exports.
package version

import (
	"runtime/debug"
	"sync"
)

// String returns the build's version: the module version when built from a tagged module
// (go install ...@v1.2.3), else the VCS revision's first 12 hex digits with "-dirty" when the
// tree had local changes, else "devel".
var String = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(bi)
})

// fromBuildInfo is String over given build information.
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
