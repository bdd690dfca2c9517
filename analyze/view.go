package analyze

// More of what a RequestView shows (registry.go holds the type and its first methods): the
// request's identity, its content events one by one, its input length and its metrics by
// tag. None of them allocates.

// Index is the request's plan index (its record number in the plan).
func (v *RequestView) Index() uint32 { return v.p.m.Index }

// Run is the number of the run directory (shard) whose log holds the request, in the order
// they were given; 0 for a single run.
func (v *RequestView) Run() int { return v.p.m.Run }

// ContentEvents is the number of content events the response carried (a whole JSON body
// with content is one).
func (v *RequestView) ContentEvents() int { return len(v.p.times) }

// ContentNs is the arrival of content event i (0 ≤ i < ContentEvents) in ns since the write
// began.
func (v *RequestView) ContentNs(i int) int64 { return v.p.times[i] - v.p.m.SendNs }

// InputTokens is the request's input length: input_sequence_length when the request has
// one (valid requests), else the plan's ISL, so failed requests have one too.
func (v *RequestView) InputTokens() float64 {
	if x, ok := v.p.value(MInputSequenceLength); ok {
		return x
	}
	if r := v.p.f.rec; r != nil {
		return float64(r.ISL)
	}
	return 0
}

// Metric returns the request's value of the per-request metric with the given tag, as
// Value does; false when the registry has no such metric or the request has no value.
func (v *RequestView) Metric(tag string) (float64, bool) {
	id, ok := v.p.reg.byTag[tag]
	if !ok {
		return 0, false
	}
	return v.Value(id)
}
