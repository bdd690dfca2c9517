// Package judge holds analyze's judgements that are written by users and checked after a
// run is analysed: release gates (--gate, the server and GPU gates, SLA criteria), goodput
// objectives (--goodput), the agreed gates file (--gates) and a run's health (Health: the one
// rule profile's sweeps, repeats and searches and analyze compare judge a run by). The
// benchmark claim, whose thresholds part reads these gates, is analyze/benchclaim's.
//
// Their syntaxes are sugar over the one expression layer, package metricexpr (CEL), which
// also compiles user metrics, --where and --group-by: sugar.go reads a gate or an objective
// as users write it (time_to_first_token.p99<400, time_to_first_token:200), refuses a bad one
// in one line naming the flag (and the file and line of a gates file), and translates it
// into an expression of that layer, which is what runs: a gate over the run's summary, an
// objective over each request (analyze.SLO.Met).
//
// judge imports analyze (the summary, the registry) and metricexpr; it
// must not import the workflows above it (export, profile, report) nor replay; analyze
// must not import judge.
package judge
