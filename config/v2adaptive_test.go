package config

import (
	"strings"
	"testing"
)

// An AIPerf v2 profiling phase's adaptive_scale block and sla filters become the
// adaptive-scale flags, one --adaptive-scale-sla per bound; a warmup has neither.
func TestV2AdaptiveScale(t *testing.T) {
	doc := `schemaVersion: "2.0"
benchmark:
  phases:
    - name: profiling
      type: concurrency
      concurrency: 64
      duration: 60
      adaptive_scale:
        enabled: true
        control: {variable: concurrency, min: 1, max: 64}
        assessment_period: 5s
        min_completed_requests: 20
        sustain_duration: 15
        strategy: {type: ramp_until_fail, step_policy: sla_margin, base_step: 2, max_step_multiplier: 4}
      sla:
        ttft:
          p95: {le: 120}
        error_rate:
          avg: {le: 0.01}
`
	ss, err := Parse([]byte(doc), "c.yaml", flags, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss {
		got = append(got, s.Flag+"="+strings.Join(s.Items(), "|"))
	}
	want := "concurrency=64 benchmark-duration=60 adaptive-scale=true adaptive-control-variable=concurrency adaptive-control-min=1 " +
		"adaptive-control-max=64 adaptive-scale-assessment-period=5 adaptive-min-completed-requests=20 adaptive-sustain-duration=15 " +
		"adaptive-scale-strategy-type=ramp_until_fail adaptive-step-policy=sla_margin adaptive-base-step=2 adaptive-max-step-multiplier=4 " +
		"adaptive-scale-sla=ttft:p95:le:120|error_rate:avg:le:0.01"
	if strings.Join(got, " ") != want {
		t.Errorf("settings\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	bad := strings.Replace(doc, "name: profiling", "name: warmup", 1)
	if _, err := Parse([]byte(bad), "c.yaml", flags, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "a warmup has no adaptive_scale") {
		t.Errorf("warmup adaptive_scale: %v", err)
	}
}
