package config

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// v2Adaptive reads a profiling phase's adaptive_scale block (AIPerf's in-run adaptive scale)
// as the adaptive-scale flags:
//
//	adaptive_scale:
//	  enabled: true                        --adaptive-scale
//	  control: {variable, min, max}        --adaptive-control-variable/-min/-max
//	  assessment_period: 5                 --adaptive-scale-assessment-period (seconds or 5s)
//	  min_completed_requests: 20           --adaptive-min-completed-requests
//	  sustain_duration: 30                 --adaptive-sustain-duration
//	  strategy: {type, step_policy, step_percent, base_step, max_step_multiplier}
func (p *parser) v2Adaptive(k, v *yaml.Node) error {
	return p.v2Mapping(v, v2Section{
		"enabled": {fn: func(p *parser, k, v *yaml.Node) error {
			b, err := strconv.ParseBool(v.Value)
			if err != nil || v.Kind != yaml.ScalarNode {
				return p.errf(v, "adaptive_scale.enabled: want true or false")
			}
			if b {
				p.out = append(p.out, Setting{Flag: "adaptive-scale", Values: []string{"true"}, Key: "adaptive_scale.enabled", Line: k.Line})
			}
			return nil
		}},
		"control": {sub: v2Section{
			"variable": {flag: "adaptive-control-variable"},
			"min":      {flag: "adaptive-control-min"},
			"max":      {flag: "adaptive-control-max"},
		}},
		"assessment_period":      {flag: "adaptive-scale-assessment-period", seconds: true},
		"min_completed_requests": {flag: "adaptive-min-completed-requests"},
		"sustain_duration":       {flag: "adaptive-sustain-duration", seconds: true},
		"strategy": {sub: v2Section{
			"type":                {flag: "adaptive-scale-strategy-type"},
			"step_policy":         {flag: "adaptive-step-policy"},
			"step_percent":        {flag: "adaptive-step-percent"},
			"base_step":           {flag: "adaptive-base-step"},
			"max_step_multiplier": {flag: "adaptive-max-step-multiplier"},
		}},
	}, "phases.profiling.adaptive_scale.")
}

// v2SLA reads a profiling phase's sla block, {metric: {stat: {op: threshold}}}, as one
// --adaptive-scale-sla metric:stat:op:threshold per bound (one setting of the repeatable flag).
func (p *parser) v2SLA(k, v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return p.errf(v, "phases.profiling.sla: want {metric: {stat: {op: threshold}}}")
	}
	set := Setting{Flag: "adaptive-scale-sla", Key: "phases.profiling.sla", Line: k.Line}
	for i := 0; i+1 < len(v.Content); i += 2 {
		metric, stats := v.Content[i], v.Content[i+1]
		if stats.Kind != yaml.MappingNode {
			return p.errf(stats, "phases.profiling.sla.%s: want {stat: {op: threshold}}", metric.Value)
		}
		for j := 0; j+1 < len(stats.Content); j += 2 {
			stat, ops := stats.Content[j], stats.Content[j+1]
			if ops.Kind != yaml.MappingNode {
				return p.errf(ops, "phases.profiling.sla.%s.%s: want {op: threshold} (le: 100)", metric.Value, stat.Value)
			}
			for l := 0; l+1 < len(ops.Content); l += 2 {
				op, thr := ops.Content[l], ops.Content[l+1]
				if thr.Kind != yaml.ScalarNode {
					return p.errf(thr, "phases.profiling.sla.%s.%s.%s: want a number", metric.Value, stat.Value, op.Value)
				}
				set.Values = append(set.Values, metric.Value+":"+stat.Value+":"+op.Value+":"+thr.Value)
			}
		}
	}
	p.out = append(p.out, set)
	return nil
}
