package rundir

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/mmapds"
	"github.com/llmbench/llmbench/rawlog"
)

// CheckPlan checks the runs' manifests against the plan at path: the identity each run.json
// recorded is the plan's (whose content Open verified), and the workers' shards fit in it.
func CheckPlan(runs []Run, plan *mmapds.Plan, path string) error {
	total := 0
	for _, r := range runs {
		where := filepath.Join(r.Dir, rawlog.ManifestName)
		if r.Manifest.PlanHash != plan.HashHex() {
			a, b := rawlog.HashPrefixes(r.Manifest.PlanHash, plan.HashHex())
			return Errorf("%s: run was made from plan %s but %s is plan %s (pass the right one with --plan)", where, a, path, b)
		}
		for _, w := range r.Manifest.Workers {
			if w.Planned > plan.Len() {
				return Errorf("%s: worker %d has %d planned requests; the plan has %d records", where, w.ID, w.Planned, plan.Len())
			}
			total += w.Planned
			if total > plan.Len() {
				return Errorf("%s: the workers have %d planned requests or more; the plan has %d records", where, total, plan.Len())
			}
		}
		if c := r.Manifest.Counts.Planned; c > plan.Len() {
			return Errorf("%s: counts.planned %d; the plan has %d records", where, c, plan.Len())
		}
	}
	return nil
}

// OpenPlan opens the plan the runs were made from: the override, else the one run's run.json
// names (ResolvePlan). The plan's whole content is hashed: its stored identity alone would
// not show a plan edited after the run (its records would silently change the results).
func OpenPlan(override string, r Run) (plan *mmapds.Plan, path string, err error) {
	if path, err = ResolvePlan(override, r); err != nil {
		return nil, "", err
	}
	plan, err = mmapds.Open(path, mmapds.Options{})
	if err != nil {
		if errors.Is(err, mmapds.ErrFormat) {
			return nil, "", Errorf("%v; %s was made from plan %s: pass that plan, unchanged, with --plan",
				err, filepath.Join(r.Dir, rawlog.ManifestName), r.Manifest.PlanHash)
		}
		return nil, "", Wrap(err)
	}
	return plan, path, nil
}

// ResolvePlan finds the plan file: the override, or run.json's plan_path taken as given and,
// when relative and absent, relative to the run directory.
func ResolvePlan(override string, r Run) (string, error) {
	if override != "" {
		return override, nil
	}
	p := r.Manifest.PlanPath
	if p == "" {
		return "", Errorf("%s: no plan_path; pass --plan", filepath.Join(r.Dir, rawlog.ManifestName))
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if q := filepath.Join(r.Dir, p); fileExists(q) {
		return q, nil
	}
	if q := filepath.Join(r.Dir, filepath.Base(p)); fileExists(q) {
		return q, nil
	}
	return "", Errorf("%s: plan %s not found (pass --plan)", filepath.Join(r.Dir, rawlog.ManifestName), p)
}
