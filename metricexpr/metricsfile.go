package metricexpr

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/internal/yamlline"
)

// User metric definitions as given (analyze --metric, --metrics-file; docs/metrics.md "User
// metrics"): the name, the expression and what it means. Package metricexpr compiles the
// expressions and registers the metrics.

// MetricsFileVersion is the version of the --metrics-file format.
const MetricsFileVersion = 1

// MetricSpec is one user metric's definition.
type MetricSpec struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
	// Unit, Description, LargerIsBetter and Failed are UserMetric's.
	Unit           string `json:"unit"`
	Description    string `json:"description"`
	LargerIsBetter bool   `json:"larger_is_better"`
	Failed         bool   `json:"failed_requests"`
	// From names where it was given, for messages: "--metric" or "--metrics-file PATH line N".
	From string `json:"-"`
}

// ParseMetricFlag parses one --metric: NAME = EXPR.
func ParseMetricFlag(s string) (MetricSpec, error) {
	name, expr, ok := strings.Cut(s, "=")
	name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
	if !ok || name == "" || expr == "" || strings.HasPrefix(expr, "=") {
		return MetricSpec{}, fmt.Errorf("--metric %q: want NAME = EXPRESSION, e.g. 'third_event_ms = chunks_ms[2]'", s)
	}
	if err := analyze.CheckMetricName(name); err != nil {
		return MetricSpec{}, fmt.Errorf("--metric %q: %s", s, strings.TrimPrefix(err.Error(), "analyze: "))
	}
	return MetricSpec{Name: name, Expression: expr, From: "--metric " + name}, nil
}

// metricsFile is the --metrics-file document:
//
//	version: 1
//	metrics:
//	  - name: third_event_ms
//	    expression: chunks_ms[2]
//	    unit: ms
//	    description: arrival of the third content event after the write began
type metricsFile struct {
	Version int          `json:"version"`
	Metrics []MetricSpec `json:"metrics"`
}

// ParseMetricsFile parses a --metrics-file strictly: unknown fields, a metric without name or
// expression, a name that is not allowed or another version are refused, naming the file and
// the line.
func ParseMetricsFile(data []byte, path string) ([]MetricSpec, error) {
	var f metricsFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		msg := err.Error()
		if m := yamlline.UnknownField.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("--metrics-file %s line %d: unknown field %q (want version, metrics; each metric: name, expression, unit, description, larger_is_better, failed_requests)",
				path, yamlline.KeyLine(data, m[1], 0), m[1])
		}
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "error converting YAML to JSON: "), "yaml: ")
		msg = strings.Join(strings.Fields(msg), " ") // the YAML decoder's list of errors, one line
		return nil, fmt.Errorf("--metrics-file %s: %s", path, msg)
	}
	switch {
	case f.Version == 0:
		return nil, fmt.Errorf("--metrics-file %s line %d: no version: want version: %d", path, max(yamlline.KeyLine(data, "version", 0), 1), MetricsFileVersion)
	case f.Version != MetricsFileVersion:
		return nil, fmt.Errorf("--metrics-file %s line %d: version %d is not supported (this build reads version %d)", path, yamlline.KeyLine(data, "version", 0), f.Version, MetricsFileVersion)
	case len(f.Metrics) == 0:
		return nil, fmt.Errorf("--metrics-file %s: no metrics", path)
	}
	after := 0
	for i := range f.Metrics {
		m := &f.Metrics[i]
		line := yamlline.KeyLine(data, "name", after)
		if line == 0 {
			line = yamlline.KeyLine(data, "expression", after)
		}
		after = line
		m.From = fmt.Sprintf("--metrics-file %s line %d", path, line)
		m.Name, m.Expression = strings.TrimSpace(m.Name), strings.TrimSpace(m.Expression)
		switch {
		case m.Name == "":
			return nil, fmt.Errorf("%s: metric %d has no name", m.From, i+1)
		case m.Expression == "":
			return nil, fmt.Errorf("%s: metric %s has no expression", m.From, m.Name)
		}
		if err := analyze.CheckMetricName(m.Name); err != nil {
			return nil, fmt.Errorf("%s: %s", m.From, strings.TrimPrefix(err.Error(), "analyze: "))
		}
		m.From += ": metric " + m.Name
	}
	return f.Metrics, nil
}
