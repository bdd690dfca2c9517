package rawlog

import (
	"fmt"
	"io"
)

// Summary is what one pass over a log finds: its header, outcome counts, whether it was
// closed cleanly, and how much of a torn final frame was skipped.
type Summary struct {
	Header Header
	// Counts tallies the outcomes of the Request records (Planned and Lost stay 0: the log
	// does not know its worker's part).
	Counts Counts
	// Requests is the number of Request records, one per distinct plan index.
	Requests int
	// Duplicates counts Request records whose index had already been seen (a bug in the writer).
	Duplicates int
	// Footer is the footer record, nil when the log was not closed cleanly (crash or kill).
	Footer *Footer
	// TornBytes is the size of a torn final frame that was skipped, 0 when none.
	TornBytes int64
	// CPUSamples and GPUSamples count the sample records.
	CPUSamples int
	GPUSamples int
}

// Summarize reads the whole log at path and tallies it. Like Reader it stops cleanly before a
// torn final frame, so it is what a coordinator uses to count the records a killed worker left.
func Summarize(path string) (*Summary, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Summary{Header: r.Header()}
	seen := map[uint32]bool{}
	for {
		k, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		switch k {
		case KindRequest:
			q := r.Request()
			if seen[q.Index] {
				s.Duplicates++
				continue
			}
			seen[q.Index] = true
			s.Requests++
			switch q.Outcome {
			case OutcomeCompleted:
				s.Counts.Completed++
			case OutcomeFailed:
				s.Counts.Failed++
			case OutcomeCancelled:
				s.Counts.Cancelled++
			case OutcomeAborted:
				s.Counts.Aborted++
			case OutcomeNotSent:
				s.Counts.NotSent++
			default:
				return s, fmt.Errorf("rawlog: %s: %w: request %d has unknown outcome %d", path, ErrFormat, q.Index, q.Outcome)
			}
		case KindCPU:
			s.CPUSamples++
		case KindGPU:
			s.GPUSamples++
		case KindFooter:
			f := r.Footer()
			s.Footer = &f
		}
	}
	s.TornBytes = r.Torn()
	return s, nil
}

// Add adds o's outcome tallies (and Planned and Lost) to c.
func (c *Counts) Add(o Counts) {
	c.Planned += o.Planned
	c.Completed += o.Completed
	c.Failed += o.Failed
	c.Cancelled += o.Cancelled
	c.Aborted += o.Aborted
	c.NotSent += o.NotSent
	c.Lost += o.Lost
	c.ClientFailed += o.ClientFailed
}

// Accounted returns how many requests the counts place in an outcome or count as lost. It
// equals Planned when every planned request is accounted for exactly once.
func (c Counts) Accounted() int {
	return c.Completed + c.Failed + c.Cancelled + c.Aborted + c.NotSent + c.Lost
}
