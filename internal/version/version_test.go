package version

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "c38cabb0123456789abcdef"}}
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		// The module's own tag is not a second source: Number is the version.
		{"module version", debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: rev}, Number + "+c38cabb01234"},
		{"revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, Number + "+c38cabb01234"},
		{"dirty", debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, Number + "+c38cabb01234-dirty"},
		{"nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Number},
	}
	for _, c := range cases {
		if got := fromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSemantic: the version is semantic versioning's MAJOR.MINOR.PATCH, with the commit
// only as build metadata.
func TestSemantic(t *testing.T) {
	semver := regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	for _, v := range []string{Number, String()} {
		if !semver.MatchString(v) {
			t.Errorf("%q is not a semantic version", v)
		}
	}
}
