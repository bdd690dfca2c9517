package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/rawlog"
	"github.com/llmbench/llmbench/replay/driver"
	"github.com/llmbench/llmbench/replay/schedule"
)

// RecoveryLogName returns the file name of the log the coordinator writes for worker i when
// it died (or never started): not_sent records for the requests it never sent.
func RecoveryLogName(i int) string { return fmt.Sprintf("worker-%03d.recovered.rawlog", i) }

// recovery is what the coordinator makes of a worker that did not report its end: every
// planned request of its part is in its log (with its outcome), was started and has no
// outcome (lost: in flight when the worker died), or was never started (not sent).
type recovery struct {
	counts  rawlog.Counts // with Planned, NotSent including the recovered ones, and Lost
	notSent []int         // plan indices never started and not in the log: recovered as not_sent
	torn    int64         // size of a torn final frame skipped in the worker's log
	// unreadable is set when the log is damaged before its end: what it holds past the
	// damage is unknown, so nothing is recovered and every request without a readable
	// Request record is counted lost.
	unreadable error
}

// partIndices returns the plan indices of worker id's part, in plan order.
func (r *Replay) partIndices(id int) []int {
	var idx []int
	for i, o := range r.info.ord {
		if o != schedule.NotInShard && schedule.WorkerOf(o, len(r.cpus)) == id {
			idx = append(idx, i)
		}
	}
	return idx
}

// recoverPart reads worker id's log and sorts its part into logged, lost and never sent.
// A missing or empty log, or one cut short before its header, means the worker sent nothing:
// it writes its header before any Sent record, and a Sent record is in the kernel before its
// request reaches the socket.
func (r *Replay) recoverPart(id int, logName string) *recovery {
	part := r.partIndices(id)
	rec := &recovery{counts: rawlog.Counts{Planned: len(part)}}
	inPart := make(map[uint32]bool, len(part))
	for _, i := range part {
		inPart[uint32(i)] = true
	}
	logged := map[uint32]bool{}
	started := map[uint32]bool{}
	err := readWorkerLog(filepath.Join(r.dir, logName), func(lr *rawlog.Reader, k rawlog.Kind) error {
		switch k {
		case rawlog.KindRequest:
			q := lr.Request()
			if !inPart[q.Index] || logged[q.Index] {
				return nil
			}
			logged[q.Index] = true
			switch driver.CountedOutcome(q) {
			case rawlog.OutcomeCompleted:
				rec.counts.Completed++
			case rawlog.OutcomeFailed:
				rec.counts.Failed++
				if strings.HasPrefix(q.Err, ClientErrorPrefix) {
					rec.counts.ClientFailed++
				}
			case rawlog.OutcomeCancelled:
				rec.counts.Cancelled++
			case rawlog.OutcomeAborted:
				rec.counts.Aborted++
			case rawlog.OutcomeNotSent:
				rec.counts.NotSent++
			default:
				return fmt.Errorf("request %d has unknown outcome %d", q.Index, q.Outcome)
			}
		case rawlog.KindSent:
			started[lr.Sent().Index] = true
		}
		return nil
	}, &rec.torn)
	if err != nil {
		rec.unreadable = err
		rec.counts.Lost = len(part) - len(logged)
		return rec
	}
	for _, i := range part {
		switch {
		case logged[uint32(i)]:
		case started[uint32(i)]:
			rec.counts.Lost++
		default:
			rec.notSent = append(rec.notSent, i)
		}
	}
	rec.counts.NotSent += len(rec.notSent)
	return rec
}

// readWorkerLog calls fn for each record of the log at path. A log that does not exist, is
// empty or ends before its header record has no records; a torn final frame ends the log and
// its size goes to *torn.
func readWorkerLog(path string, fn func(*rawlog.Reader, rawlog.Kind) error, torn *int64) error {
	lr, err := rawlog.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, rawlog.ErrNoHeader) {
		return nil
	}
	if err != nil {
		return err
	}
	defer lr.Close()
	for {
		k, err := lr.Next()
		if err == io.EOF {
			*torn = lr.Torn()
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(lr, k); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// writeRecoveryLog writes worker id's recovery log: a not_sent Request record, whose Err is
// why, for each plan index in idx. The coordinator writes it, so its header has the
// coordinator's pid and no CPU. It reads nothing from the plan's mapping (the file may have
// been truncated: that may be why the worker died), and a log it could not finish is
// removed, not left half written.
func (r *Replay) writeRecoveryLog(id int, idx []int, why string) (err error) {
	path := filepath.Join(r.dir, RecoveryLogName(id))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	lw, err := rawlog.NewWriter(bw, rawlog.Header{Worker: id, PID: os.Getpid(), CPU: -1,
		PlanHash: r.plan.HashHex(), StartUnixNs: r.manifest.StartUnixNs,
		PlanPath: r.absPlan(), Planned: r.planned[id], Workers: len(r.cpus)})
	if err != nil {
		return err
	}
	urls := len(r.opts.URLs)
	for _, i := range idx {
		q := driver.NotSentRecord(uint32(i), r.info.offsets[i], int(r.info.ord[i])%urls, why)
		if err := lw.WriteRequest(&q); err != nil {
			return err
		}
	}
	endNs := int64(-1)
	if r.manifest.StartUnixNs != 0 {
		endNs = r.manifest.EndUnixNs - r.manifest.StartUnixNs
	}
	if err := lw.Close(rawlog.Footer{TimeNs: endNs, Status: rawlog.StatusRecovered}); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Sync()
}
