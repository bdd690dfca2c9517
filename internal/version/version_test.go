package version

import (
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
		{"module version", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: rev}, "v1.2.3"},
		{"revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "c38cabb01234"},
		{"dirty", debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "c38cabb01234-dirty"},
		{"nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	}
	for _, c := range cases {
		if got := fromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if String() == "" {
		t.Error("String() is empty")
	}
}
