package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/config"
)

// configFS is a flag set with plan, replay and analyze flags, as profile composes them.
func configFS() *pflag.FlagSet {
	fs := NewFlagSet("t")
	p, sw := NewPlan(), NewSweep()
	sw.Lists(p.FS)
	for _, s := range []*pflag.FlagSet{p.FS, NewReplay().FS, NewAnalyze().FS, sw.FS} {
		fs.AddFlagSet(s)
	}
	return fs
}

// TestConfigSettings: what a config file sets, in both forms: lists repeat a repeatable flag
// and join for a list flag, mappings become key-value items, v2 keys map onto our flags
// (camelCase too, durations in seconds, warmup and profiling phases, sweeps).
func TestConfigSettings(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       map[string]string // flag -> values joined by |
	}{
		{"flag keys", "model: m\nconcurrency: [1, 2]\nurl: [http://a, http://b]\nheader: {X-A: b}\nextra_inputs: {ignore_eos: true, n: 2}\nstreaming: true\nosl: null\n",
			map[string]string{"model": "m", "concurrency": "1,2", "url": "http://a|http://b", "header": "X-A: b", "extra-inputs": "ignore_eos:true|n:2", "streaming": "true"}},
		{"v2", `schemaVersion: "2.0"
multiRun: {numRuns: 3}
benchmark:
  models: {items: [{name: a}, {name: b}], strategy: random}
  endpoint: {urls: [http://x], streaming: true, timeout: 5m, headers: {K: v}}
  dataset: {prompts: {isl: 128, osl: {mean: 16, stddev: 2}}, turns: {mean: 3}}
  phases:
    - {name: warmup, type: poisson, rate: 4, duration: 10s, rate_ramp: {duration: 2}}
    - {name: profiling, type: gamma, rate: 8, smoothness: 2, requests: 20, concurrency_ramp: 3, grace_period: inf}
sweep: {type: grid, parameters: {concurrency: [1, 4]}}
`, map[string]string{"num-profile-runs": "3", "model": "a,b", "model-selection-strategy": "random", "url": "http://x", "streaming": "true",
			"request-timeout-seconds": "300", "header": "K: v", "synthetic-input-tokens-mean": "128", "output-tokens-mean": "16", "output-tokens-stddev": "2",
			"conversation-turn-mean": "3", "warmup-arrival-pattern": "poisson", "warmup-request-rate": "4", "warmup-duration": "10",
			"warmup-request-rate-ramp-duration": "2", "arrival-pattern": "gamma", "request-rate": "8", "arrival-smoothness": "2", "request-count": "20",
			"concurrency-ramp-duration": "3", "benchmark-grace-period": "inf", "concurrency": "1,4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss, err := config.Parse([]byte(c.text), "c.yaml", ConfigFlags(configFS()), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range ss {
				sep := "|"
				if s.Join {
					sep = ","
				}
				got[s.Flag] = strings.Join(s.Values, sep)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("--%s = %q, want %q", k, got[k], v)
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("settings %v, want %v", got, c.want)
			}
			fs := configFS()
			if err := ApplyConfig(fs, ss, nil, "c.yaml"); err != nil {
				t.Fatalf("apply: %v", err)
			}
		})
	}
}

// FuzzParseConfig: no config file, however malformed, panics the parser or the flags.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"model: m\n", "schemaVersion: \"2.0\"\nbenchmark: {model: m, phases: [{name: warmup}]}\n",
		"a: [1, {b: c}]\n", "url: ${X:y}\n", "- 1\n", "schemaVersion: 2.0\nsweep: {parameters: {rate: [1]}}\n", "header: {a: [1]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := configFS()
		ss, err := config.Parse(data, "fuzz.yaml", ConfigFlags(fs), func(string) string { return "" })
		if err == nil {
			_ = ApplyConfig(fs, ss, nil, "fuzz.yaml")
		}
	})
}
