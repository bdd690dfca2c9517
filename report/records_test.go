package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const recordLine = `{"metadata":{"credit_issued_ns":100,"request_start_ns":110,"request_end_ns":900,"outcome":"completed"},"metrics":{"time_to_first_token":{"value":20.5,"unit":"ms"},"inter_chunk_latency":{"value":[1.0,2.0],"unit":"ms"},"output_sequence_length":{"value":12,"unit":"tokens"}},"error":null}`
const errorLine = `{"metadata":{"credit_issued_ns":null,"request_start_ns":120,"request_end_ns":null},"metrics":{},"error":{"code":500,"type":"http_500","message":"x"}}`

func TestRecordsWrite(t *testing.T) {
	var r Records
	all := recordLine + "\n" + errorLine + "\n"
	// Feed in small pieces: lines span writes.
	for i := 0; i < len(all); i += 7 {
		if _, err := r.Write([]byte(all[i:min(len(all), i+7)])); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(r.Requests) != 2 {
		t.Fatalf("%d requests", len(r.Requests))
	}
	q := r.Requests[0]
	if q.IntendedNs != 100 || q.SendNs != 110 || q.EndNs != 900 || !q.OK || q.Value(FTTFT) != 20.5 || q.Value(FOSL) != 12 || !math.IsNaN(q.Value(FITL)) {
		t.Errorf("first record %+v", q)
	}
	e := r.Requests[1]
	if e.OK || e.ErrKind != "http_500" || e.IntendedNs != -1 || e.EndNs != -1 || e.SendNs != 120 {
		t.Errorf("error record %+v", e)
	}
}

func TestRecordsBadLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{recordLine + "\n{oops\n", "records line 2"},
		{`{"metrics":{"time_to_first_token":{"value":"x"}}}` + "\n", "line 1: time_to_first_token"},
	} {
		var r Records
		_, err := r.Write([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	// A last line without its newline is read by Close.
	var r Records
	if _, err := r.Write([]byte(recordLine)); err != nil || len(r.Requests) != 0 {
		t.Fatal(err, len(r.Requests))
	}
	if err := r.Close(); err != nil || len(r.Requests) != 1 {
		t.Fatal(err, len(r.Requests))
	}
}

func TestReadRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile_export.jsonl")
	if err := os.WriteFile(path, []byte(recordLine+"\n"+errorLine), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecords(path)
	if err != nil || len(r.Requests) != 2 {
		t.Fatal(err)
	}
	if _, err := ReadRecords(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file read")
	}
}

// FuzzRecords: any bytes give records or an error, never a panic.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(recordLine + "\n" + errorLine + "\n"))
	f.Add([]byte("{}\n\n{\"metrics\":null}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Records
		if _, err := r.Write(b); err != nil {
			return
		}
		_ = r.Close()
	})
}
