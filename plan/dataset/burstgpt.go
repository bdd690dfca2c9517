package dataset

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// BurstGPT columns (github.com/HPMLL/BurstGPT): Timestamp (seconds from the trace's start),
// Model, Request tokens, Response tokens, Total tokens, Log Type. Only three matter here.
const (
	burstTimestamp = "Timestamp"
	burstRequest   = "Request tokens"
	burstResponse  = "Response tokens"
)

// isBurstGPTHeader reports whether a CSV line names the BurstGPT columns LoadFile needs.
func isBurstGPTHeader(line []byte) bool {
	rec, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return false
	}
	need := map[string]bool{burstTimestamp: true, burstRequest: true, burstResponse: true}
	for _, c := range rec {
		delete(need, strings.TrimSpace(c))
	}
	return len(need) == 0
}

// burstRow is one BurstGPT request.
type burstRow struct {
	line     int
	ts       int64
	inputLen int
	osl      int
}

// parseBurstGPT reads a BurstGPT CSV file; errors carry the line they concern.
func parseBurstGPT(data []byte) ([]burstRow, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err, 1)
	}
	col := map[string]int{}
	for i, c := range header {
		col[strings.TrimSpace(c)] = i
	}
	var idx [3]int
	for i, name := range []string{burstTimestamp, burstRequest, burstResponse} {
		j, ok := col[name]
		if !ok {
			line, _ := r.FieldPos(0)
			return nil, &posError{line, fmt.Errorf("no %q column (want BurstGPT's Timestamp, Request tokens, Response tokens)", name)}
		}
		idx[i] = j
	}
	var rows []burstRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err, 0)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		row := burstRow{line: line}
		for i, j := range idx {
			if j >= len(rec) {
				return nil, &posError{line, fmt.Errorf("%d fields, the header has %d", len(rec), len(header))}
			}
			v := strings.TrimSpace(rec[j])
			switch i {
			case 0:
				if row.ts, err = secToNs(burstTimestamp, json.Number(v)); err != nil {
					return nil, &posError{line, err}
				}
			case 1:
				if row.inputLen, err = csvCount(burstRequest, v); err != nil {
					return nil, &posError{line, err}
				}
			case 2:
				if row.osl, err = csvCount(burstResponse, v); err != nil {
					return nil, &posError{line, err}
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// csvCount parses a token count cell: an integer, or a float with no fraction ("472.0").
func csvCount(field, v string) (int, error) {
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return checkLength(field, i)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, fmt.Errorf("%s %q: want a whole number", field, v)
	}
	return checkLength(field, int64(f))
}

func csvError(err error, line int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &posError{pe.Line, pe.Err}
	}
	if err == io.EOF {
		return &posError{line, errors.New("no header")}
	}
	return &posError{line, err}
}

func (l *loader) burstGPT() (*Dataset, error) {
	f := l.in.files[0]
	rows, err := parseBurstGPT(f.data)
	if err != nil {
		var le *posError
		if errors.As(err, &le) {
			return nil, l.lineErr(f.path, le.line, le.err)
		}
		return nil, l.lineErr(f.path, 0, err)
	}
	if len(rows) == 0 {
		return nil, l.lineErr(f.path, 0, errors.New("no records"))
	}
	syn, err := l.synth()
	if err != nil {
		return nil, err
	}
	convs := make([]Conversation, len(rows))
	for i, r := range rows {
		t := Turn{
			TimestampNs:  r.ts,
			DelayNs:      NoTime,
			Prompt:       syn.fresh(l.rng(l.typ, uint64(r.line)), r.inputLen),
			PromptTokens: r.inputLen,
			OSL:          r.osl,
		}
		convs[i] = Conversation{SessionID: fmt.Sprintf("line-%d", r.line), Turns: []Turn{t}}
	}
	return &Dataset{Conversations: convs, Timed: true}, nil
}
