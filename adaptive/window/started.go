package window

// JudgeStarted judges the window b by the requests sent inside it, [b.StartNs, b.EndNs),
// wherever they ended: the selection of the per-request export's records whose
// request_start_ns lies in the window, which is how a window is recomputed from
// profile_export.jsonl. The in-run controller judges this way, once every request sent in
// the window has ended (it waits for them), so that a window's requests are exactly those
// released under its control value. Each request counts whole, as sent in the window: its
// rates are per second of the window. Straddling counts the requests sent before the window
// (under the previous control value, or in the gap after the previous window) that ended
// inside it: counted apart, never judged.
func (c *Criteria) JudgeStarted(records []Record, b Bounds) Verdict {
	inside := make([]Record, 0, len(records))
	straddling := 0
	for _, r := range records {
		switch {
		case r.StartNs >= b.StartNs && r.StartNs < b.EndNs:
			r.EndNs = min(r.EndNs, b.EndNs-1) // judged whole, as Judge's inside requests are
			inside = append(inside, r)
		case r.StartNs < b.StartNs && r.EndNs >= b.StartNs:
			straddling++
		}
	}
	v := c.Judge(inside, b)
	v.Straddling = straddling
	return v
}
