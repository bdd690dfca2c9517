package analyze

import "github.com/llmbench/llmbench/mmapds"

// maxShapeSamples bounds the requests one log contributes to the workload shape samples.
const maxShapeSamples = 200000

// ShapeSample is one valid profile request, kept for the workload shape check
// (benchclaim.ValidateShape): its plan index, ISL and OSL, when it was sent, and when the plan
// meant it to be.
type ShapeSample struct {
	Index      uint32
	ISL, OSL   float64
	SendUnixNs int64
	IntendedNs int64 // the plan's offset, or mmapds.NoSendOffset
}

// shapeSamples collects the requests of one log.
type shapeSamples struct {
	s       []ShapeSample
	dropped int64
}

func (c *shapeSamples) add(m *requestMetrics) {
	if !m.Valid || !m.Sent || m.Phase != mmapds.PhaseProfile {
		return
	}
	if len(c.s) >= maxShapeSamples {
		c.dropped++
		return
	}
	c.s = append(c.s, ShapeSample{Index: m.Index, ISL: m.Values[MInputSequenceLength], OSL: m.Values[MOutputSequenceLength],
		SendUnixNs: m.StartUnixNs + m.SendNs, IntendedNs: m.IntendedNs})
}

// mergeShape joins the logs' samples.
func mergeShape(parts []*logAnalysis) *shapeSamples {
	out := &shapeSamples{}
	for _, p := range parts {
		if p != nil {
			out.s = append(out.s, p.shape.s...)
			out.dropped += p.shape.dropped
		}
	}
	return out
}

// ShapeSamples are the run's valid profile requests (at most maxShapeSamples of each log),
// for the workload shape check; nil when none was kept.
func (s *Summary) ShapeSamples() []ShapeSample {
	if s.shape == nil {
		return nil
	}
	return s.shape.s
}
