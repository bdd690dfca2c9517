package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/analyze"
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

// The values of a metric that is not built-in (a user metric) are kept per request, aligned
// with the requests: one first seen on a later line has none for the earlier ones.
func TestRecordsUserMetrics(t *testing.T) {
	var r Records
	lines := []string{recordLine,
		`{"metadata":{},"metrics":{"mine":{"value":3.5,"unit":"ms"},"time_to_first_token":{"value":21,"unit":"ms"}},"error":null}`,
		`{"metadata":{},"metrics":{"other":{"value":[1,2],"unit":"x"},"mine":{"value":4,"unit":"ms"}},"error":null}`,
		errorLine}
	if _, err := r.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := r.user["mine"]; len(got) != 4 || !math.IsNaN(float64(got[0])) || got[1] != 3.5 || got[2] != 4 || !math.IsNaN(float64(got[3])) {
		t.Errorf("mine %v; want NaN 3.5 4 NaN", got)
	}
	if got := r.valuesOf("mine", isOK); len(got) != 2 || got[0] != 3.5 || got[1] != 4 {
		t.Errorf("valuesOf(mine) %v", got)
	}
	if got := r.valuesOf("time_to_first_token", nil); len(got) != 2 || got[1] != 21 {
		t.Errorf("valuesOf(time_to_first_token) %v", got)
	}
	if _, kept := r.user["time_to_first_token"]; kept || r.valuesOf("other", nil) != nil || r.valuesOf("absent", nil) != nil {
		t.Errorf("built-in or list metrics kept as user columns: %v", r.user)
	}
	if _, err := r.Write([]byte(`{"metrics":{"mine":{"value":"x"}}}` + "\n")); err == nil || !strings.Contains(err.Error(), "mine") {
		t.Errorf("a bad user value: %v", err)
	}
	// Columns are bounded: each new key on a line would otherwise cost a value per request.
	var many Records
	var b strings.Builder
	for i := 0; i <= analyze.MaxUserMetrics; i++ {
		fmt.Fprintf(&b, `{"metrics":{"m%d":{"value":1}}}`+"\n", i)
	}
	if _, err := many.Write([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "not built-in") {
		t.Errorf("%d user metrics: %v", analyze.MaxUserMetrics+1, err)
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
	f.Add([]byte(`{"metrics":{"mine":{"value":1}}}` + "\n" + `{"metrics":{"mine":{"value":[1]},"b":{"value":2}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Records
		if _, err := r.Write(b); err != nil {
			return
		}
		_ = r.Close()
	})
}
