package output

import (
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/analyze"
)

// VerdictLine is the one-line judgement of whether the client kept its schedule.
func VerdictLine(s *analyze.Summary) string {
	v := s.Verdict
	var facts []string
	if v.LagKnown {
		facts = append(facts, fmt.Sprintf("dispatch lag p99 %s ms (bound %s ms)", analyze.FormatNumber(v.DispatchLagP99Ms), analyze.FormatNumber(v.MaxLagMs)))
	}
	if v.CPUKnown {
		facts = append(facts, fmt.Sprintf("busiest %s at %s%% CPU (bound %s%%)", analyze.BusiestWords(&v), analyze.FormatNumber(v.BusiestWorkerPct), analyze.FormatNumber(v.MaxCPUPct)))
	}
	if f := floorFact(&v); f != "" {
		facts = append(facts, f)
	}
	if v.Kept && v.Jitter {
		facts = append(facts, jitterFact(&v))
	}
	server := serverCloseFact(&v.Server)
	if server != "" {
		facts = append(facts, server)
	}
	var line string
	switch {
	case !v.Known:
		line = "Verdict: unknown: no request was sent and no worker CPU was sampled"
	case v.Kept && s.Counts.Valid == 0:
		// Nothing succeeded: there is no server performance to describe, only its failures.
		line = "Verdict: schedule kept: " + strings.Join(facts, "; ") +
			". But every request failed, so these numbers describe failures, not the server's performance: see Errors."
	case v.Kept:
		line = "Verdict: schedule kept: " + strings.Join(facts, "; ") + ". These numbers describe the server."
	default:
		reasons := v.Reasons
		if f := floorFact(&v); f != "" {
			reasons = append(reasons[:len(reasons):len(reasons)], f)
		}
		if server != "" {
			reasons = append(reasons[:len(reasons):len(reasons)], server)
		}
		line = "Verdict: schedule NOT kept: " + strings.Join(reasons, "; ") +
			". These numbers describe the client, not the server: use more workers or a lower rate."
	}
	if e := analyze.EndedEarly(s); e != "" {
		line += " " + e
	}
	return line
}

// floorFact is the machine's floor as printed beside the lag; "" without calibration.
func floorFact(v *analyze.Verdict) string {
	if !v.FloorKnown {
		return ""
	}
	return fmt.Sprintf("machine floor: timer wake-up p50 %s ms p99 %s ms, loopback round trip %s µs, syscall %s µs",
		analyze.FormatNumber(v.FloorTimerLagP50Ms), analyze.FormatNumber(v.FloorTimerLagP99Ms), analyze.FormatNumber(v.FloorLoopbackRTTUs), analyze.FormatNumber(v.FloorSyscallUs))
}

// jitterFact explains a kept run whose lag was over the fixed bound.
func jitterFact(v *analyze.Verdict) string {
	s := fmt.Sprintf("the lag over %s ms only jittered the arrivals", analyze.FormatNumber(v.MaxLagMs))
	if v.MeanGapMs > 0 {
		s += fmt.Sprintf(" (%s%% of the plan's mean gap %s ms)", analyze.FormatNumber(v.DispatchLagP99Ms/v.MeanGapMs*100), analyze.FormatNumber(v.MeanGapMs))
	}
	if v.LatencyP50Ms > 0 {
		s += fmt.Sprintf(", it is %s%% of %s p50 %s ms", analyze.FormatNumber(v.DispatchLagP99Ms/v.LatencyP50Ms*100), v.LatencyName, analyze.FormatNumber(v.LatencyP50Ms))
	}
	if v.FloorKnown && v.DispatchLagP99Ms <= 2*v.FloorTimerLagP99Ms {
		s += ", and within twice this machine's timer wake-up p99"
	}
	return s + "; latencies are measured from the actual send"
}

// serverCloseFact is the verdict's sentence about the server's closes; "" when the server
// closed nothing the client would have reused.
func serverCloseFact(sc *analyze.ServerConnections) string {
	if sc.ServerClosed == 0 && sc.Reconnects == 0 {
		return ""
	}
	what := fmt.Sprintf("the server closed %d connections the client would have reused", sc.ServerClosed)
	if sc.AfterEachResponse {
		what = "the server closed the connection after each response"
	}
	reconnects := "reconnects"
	if sc.Reconnects == 1 {
		reconnects = "reconnect"
	}
	return fmt.Sprintf("%s: %d %s, %d of %d requests on a new connection for it (the server's doing, not the client's: dispatch lag counts from each request's first attempt)",
		what, sc.Reconnects, reconnects, sc.ServerClosed, sc.Sent)
}
