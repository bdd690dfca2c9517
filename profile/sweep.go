package profile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/sweep"
)

// pointDir creates the directory of point p inside dir, named by its stimulus as a single
// run's artifact directory is (concurrency8, request_rate10, concurrency4-request_rate10),
// after prefix when not empty.
func (r *runner) pointDir(dir, prefix string, p Point) (string, error) {
	st, err := r.opts.Stages.Apply(p)
	if err != nil {
		return "", err
	}
	name := StimulusName(st)
	if prefix != "" {
		name = prefix + "-" + name
	}
	return NewDir(filepath.Join(dir, name))
}

// sweep runs every point of the sweep, one directory each, then writes the aggregate into
// dir/aggregate and prints one line per point. An interrupted point ends the sweep; the
// aggregate then holds the points done. A sweep with an invalid point (a run that failed,
// did not complete, had failed requests beyond --max-error-rate or a client that did not
// keep its schedule) fails, saying which points and why.
func (r *runner) sweep(dir string) int {
	var points []*pointResult
	code := 0
	for i, p := range r.o.Points {
		pdir, err := r.pointDir(dir, "", p)
		if err != nil {
			r.say(err)
			return worse(code, 2)
		}
		fmt.Fprintf(r.stderr, "profile: sweep point %d of %d (%s) in %s\n", i+1, len(r.o.Points), Describe(p), pdir)
		pr := r.point(pdir, p)
		points = append(points, pr)
		code = worse(code, pr.code)
		if pr.code == 130 || (pr.code == 2 && len(pr.runs) == 0) {
			break
		}
	}
	if err := r.writeSweep(dir, points); err != nil {
		r.say(err)
		return worse(code, 1)
	}
	var invalid []string
	for _, p := range points {
		if !p.valid {
			invalid = append(invalid, Describe(p.point))
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintf(r.stderr, "profile: sweep: %d of %d points invalid (%s): never best nor Pareto-optimal; why is above, one line each\n",
			len(invalid), len(points), strings.Join(invalid, "; "))
		code = worse(code, 1)
	}
	return code
}

// sweepAnalysis is what the sweep aggregate says beyond the points.
type sweepAnalysis struct {
	best   map[string]bestConfig
	pareto []int
	axes   []sweep.Objective
}

type bestConfig struct {
	Parameters map[string]any `json:"parameters"`
	Metric     jnum           `json:"metric"`
	Unit       string         `json:"unit"`
	// point and key are the point chosen (its index) and the aggregate key it was chosen on.
	point int
	key   string
}

// params is a point's parameters as JSON: concurrency as an integer.
func params(p Point) map[string]any {
	m := map[string]any{}
	for _, prm := range p {
		if prm.Flag == "concurrency" {
			m[prm.Name] = int(prm.Value)
		} else {
			m[prm.Name] = prm.Value
		}
	}
	return m
}

// analyse chooses the best point per objective and the Pareto set among the valid points
// (sweep.BestPoints, sweep.ParetoFront): a point whose runs failed, whose requests failed
// beyond --max-error-rate or whose client did not keep its schedule never wins, and a
// point without a metric does not stop the others from being compared on it.
func analyse(points []*pointResult) sweepAnalysis {
	a := sweepAnalysis{best: map[string]bestConfig{}}
	valid := make([]bool, len(points))
	values := make([]map[string]float64, len(points))
	for i, p := range points {
		valid[i] = p.valid
		values[i] = make(map[string]float64, len(p.metrics))
		for k, m := range p.metrics {
			values[i][k] = m.c.Mean
		}
	}
	for name, b := range sweep.BestPoints(values, valid, sweep.BestObjectives) {
		a.best[name] = bestConfig{params(points[b.Point].point), jnum(b.Value), points[b.Point].metrics[b.Objective.Key].unit, b.Point, b.Objective.Key}
	}
	a.pareto, a.axes = sweep.ParetoFront(values, valid, sweep.ParetoAxes)
	return a
}
