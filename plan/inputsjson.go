package plan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llmbench/llmbench/mmapds"
)

// InputsJSONFile is the name AIPerf gives the payloads file in its artifact directory.
const InputsJSONFile = "inputs.json"

// WriteInputsJSON writes AIPerf's inputs.json view of p to w:
//
//	{"data": [{"session_id": "session_000000", "payloads": [{body}, ...]}, ...]}
//
// one entry per session in record order (warmup sessions first), each with its turns' bodies
// as the plan stores them (a non-JSON body as a JSON string; a live-history body with its
// splice marker). It is a derived view: the plan stays the source. It streams, holding one
// body at a time.
func WriteInputsJSON(w io.Writer, p *mmapds.Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"data":[`)
	var sid []byte
	var cur uint32
	open := false
	for i := range p.Len() {
		r, body, err := p.Record(i)
		if err != nil {
			return err
		}
		if !open || r.Session != cur {
			if open {
				bw.WriteString("]},\n")
			} else {
				bw.WriteString("\n")
			}
			cur, sid = r.Session, fmt.Appendf(sid[:0], "session_%06d", r.Session)
			bw.WriteString(`{"session_id":"`)
			bw.Write(sid)
			bw.WriteString(`","payloads":[`)
			open = true
		} else {
			bw.WriteByte(',')
		}
		if json.Valid(body) {
			bw.Write(body)
		} else {
			b, _ := json.Marshal(string(body))
			bw.Write(b)
		}
	}
	if open {
		bw.WriteString("]}\n")
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// WriteInputsJSONFile writes the inputs.json view of the plan at planPath to path, whole or
// not at all (a temporary file renamed into place).
func WriteInputsJSONFile(planPath, path string) error {
	p, err := mmapds.Open(planPath, mmapds.Options{SkipHash: true})
	if err != nil {
		return err
	}
	defer p.Close()
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("inputs.json: %w", err)
	}
	if err := WriteInputsJSON(f, p); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("inputs.json: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("inputs.json: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("inputs.json: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("inputs.json: %w", err)
	}
	return nil
}
