// Package version says which build of llmbench is running: one string for every command's
// --version, plan inspect, run.json and the exports.
package version

import (
	"runtime/debug"
	"sync"
)

// Number is llmbench's semantic version, the one place it is set: every command's --version,
// the plan compiler's tool field (plan.ToolVersion), run.json and the exports begin with it.
// A constant, so a plan's bytes depend on the version and never on the build.
const Number = "0.1.0"

// String returns the build's version: Number, with the VCS commit beside it as semantic
// versioning's build metadata when the build knows it ("0.1.0+c38cabb01234", "-dirty"
// added when the tree had local changes), else Number alone.
var String = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Number
	}
	return fromBuildInfo(bi)
})

// fromBuildInfo is String over given build information.
func fromBuildInfo(bi *debug.BuildInfo) string {
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
		return Number
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return Number + "+" + rev
}
