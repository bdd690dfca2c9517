package cli

import (
	"fmt"
	"github.com/llmbench/llmbench/analyze/servertime"
	"os"

	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/analyze"
	"github.com/llmbench/llmbench/metricexpr"
)

// userMetricFlags are --metric and --metrics-file (docs/metrics.md "User metrics"): the
// metrics a user defines in CEL, which join the built-in ones in every output.
type userMetricFlags struct {
	metrics []string
	file    string
}

func addUserMetricFlags(fs *pflag.FlagSet) *userMetricFlags {
	u := &userMetricFlags{}
	fs.StringArrayVar(&u.metrics, "metric", nil, `user metric 'NAME = EXPR' in CEL over the request's variables, e.g. 'third_event_ms = chunks_ms[2]' (repeatable; docs/metrics.md "User metrics")`)
	fs.StringVar(&u.file, "metrics-file", "", "YAML file of user metrics (version: 1; metrics: each with name, expression, unit, description)")
	return u
}

// defined reports whether any user metric is given.
func (u *userMetricFlags) defined() bool { return len(u.metrics) > 0 || u.file != "" }

// registry compiles the user metrics (--metrics-file's first, then each --metric) onto a new
// registry: nil, the built-ins, when there are none. A bad definition is an error naming
// the metric and the column of the expression.
func (u *userMetricFlags) registry() (*analyze.Registry, *servertime.Metrics, error) {
	// The server metrics (from server spans, analyze --server-traces) come first: user
	// metrics, gates and selections may name them.
	reg := analyze.NewRegistry()
	traces, err := servertime.Register(reg)
	if err != nil || !u.defined() {
		return reg, traces, err
	}
	var specs []metricexpr.MetricSpec
	if u.file != "" {
		b, err := os.ReadFile(u.file)
		if err != nil {
			return nil, nil, fmt.Errorf("--metrics-file: %w", err)
		}
		fs, err := metricexpr.ParseMetricsFile(b, u.file)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, fs...)
	}
	for _, m := range u.metrics {
		s, err := metricexpr.ParseMetricFlag(m)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, s)
	}
	if err := metricexpr.Register(reg, specs); err != nil {
		return nil, nil, err
	}
	return reg, traces, nil
}

// selectionFlags are --where and --group-by (docs/metrics.md "Selections and groups").
type selectionFlags struct {
	where, groupBy string
}

func addSelectionFlags(fs *pflag.FlagSet) *selectionFlags {
	s := &selectionFlags{}
	fs.StringVar(&s.where, "where", "", `compute every metric over the requests this boolean CEL expression holds for, e.g. 'isl > 4096' (same variables as --metric)`)
	fs.StringVar(&s.groupBy, "group-by", "", `also summarise each group of requests this CEL expression splits them into, e.g. 'turn' (one block per group in the console and JSON, a column in CSV)`)
	return s
}

// compile compiles the selection and the grouping against reg (user metrics included); nil
// for a flag not given.
func (s *selectionFlags) compile(reg *analyze.Registry) (*analyze.Selection, *analyze.Grouping, error) {
	var (
		where *analyze.Selection
		group *analyze.Grouping
		err   error
	)
	if s.where != "" {
		if where, err = metricexpr.Where(reg, s.where); err != nil {
			return nil, nil, err
		}
	}
	if s.groupBy != "" {
		if group, err = metricexpr.GroupBy(reg, s.groupBy); err != nil {
			return nil, nil, err
		}
	}
	return where, group, nil
}
