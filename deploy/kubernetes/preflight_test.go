package kubernetes

import (
	"strings"
	"testing"
	"time"
)

// ShardGrace refuses a shard's times in seconds out of their range and an infinite grace,
// naming the flag, and returns the grace the pods' termination grace must exceed.
func TestShardGrace(t *testing.T) {
	valid := map[string]float64{"request-timeout-seconds": 600, "wait-for-model-timeout": 0, "wait-for-model-interval": 1}
	with := func(name string, v float64) func(string) float64 {
		return func(n string) float64 {
			if n == name {
				return v
			}
			return valid[n]
		}
	}
	for _, c := range []struct {
		name    string
		seconds func(string) float64
		grace   string
		want    time.Duration
		err     string
	}{
		{"valid", with("", 0), "30", 30 * time.Second, ""},
		{"zero grace", with("", 0), "0", 0, ""},
		{"zero request timeout", with("request-timeout-seconds", 0), "30", 0, "--request-timeout-seconds 0: want seconds in (0,"},
		{"negative wait", with("wait-for-model-timeout", -1), "30", 0, "--wait-for-model-timeout -1: want seconds in [0,"},
		{"interval past a year", with("wait-for-model-interval", 1e9), "30", 0, "--wait-for-model-interval 1e+09"},
		{"infinite grace", with("", 0), "inf", 0, "--benchmark-grace-period inf: a pod is killed"},
		{"bad grace", with("", 0), "soon", 0, `--benchmark-grace-period "soon"`},
		{"negative grace", with("", 0), "-1", 0, "--benchmark-grace-period -1"},
	} {
		g, err := ShardGrace(c.seconds, c.grace)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one starting %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || g != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, g, err, c.want)
		}
	}
}
