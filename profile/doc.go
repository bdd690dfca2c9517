// Package profile is the workflow of the profile command (AIPerf's aiperf profile): for
// each point of the load — one, a sweep's grid (--concurrency 1,2,4) or a search's probes
// — it places the plan (compiled, or the shared --plan copied), runs it once or
// --num-profile-runs times (replay, then analyze; a cooldown between; early stop on
// convergence), judges every run (a crash, an interrupted run, failed requests beyond the
// bound, a client that did not keep its schedule: judge.Health), and writes AIPerf's
// multi-run files: the confidence aggregate and pooled percentiles of repeats
// (aggregate_export.go), the sweep aggregate with its best points, Pareto set and sweep page
// (sweep_export.go), and the search history (search_export.go); repeat.go, sweep.go and
// search.go hold the loops and the decisions those files report. It names the artifact
// directories (artifacts.go) and never reuses one.
//
// The three stages are an interface (Stages) the command builds from its flag sets, so
// the workflow reads no flag and no environment, and its tests drive it with stages of
// their own. SweepSettings (settings.go) are the multi-run settings as given, checked and
// turned into SweepOptions here, beside the options they fill; Noted (noted.go) lists AIPerf's
// flags that profile accepts with a note, and the values it still refuses of them. The decisions — validity,
// Pareto, the search's next probe — are package sweep's, the statistics package stats';
// this package runs the points and writes the files.
package profile
