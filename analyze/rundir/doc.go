// Package rundir opens the run directories that analyze reads (docs/run-format.md): it
// finds the runs given (a distributed run's <run-id>/shard-<I>/ layout expanded), reads each
// run.json (rebuilding a damaged one from the logs' headers), checks that they are runs of
// one plan and that their manifests fit that plan, finds the plan file, and lists the logs
// to read. It yields what was logged and says plainly what is wrong with it; every such
// error wraps ErrInput. It computes no metric and judges nothing: analyze does.
//
// rundir imports the format packages (rawlog, mmapds) and the standard library only; it
// may not import analyze, its judgement or its outputs, nor the replay engine.
package rundir
