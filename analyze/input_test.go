package analyze

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/rawlog"
)

// smallRun is a 2-worker run of 8 requests (4 per worker) with 4 tokens each.
func smallRun(t *testing.T) string {
	t.Helper()
	return scenario{n: 8, workers: 2, ttft: 20 * ms, itl: 5 * ms, tokens: 4, concurrency: 2, streaming: true}.build(t, t.TempDir())
}

// editManifest rewrites dir/run.json through edit, as JSON, so fields can be given any value.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, rawlog.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantInputErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v; want a one-line input error mentioning %q", err, want)
	}
}

// A plan edited after the run (record 0's ISL 100 → 100000, trailer untouched) is refused:
// opened on its stored identity alone it would change the results silently.
func TestPlanEditedAfterRun(t *testing.T) {
	dir := smallRun(t)
	path := filepath.Join(dir, "plan.plan")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recordsOff := binary.LittleEndian.Uint64(b[48:])
	if isl := binary.LittleEndian.Uint32(b[recordsOff+48:]); isl != 100 {
		t.Fatalf("record 0 ISL %d; the record layout changed", isl)
	}
	binary.LittleEndian.PutUint32(b[recordsOff+48:], 100_000)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}}, nil)
	wantInputErr(t, err, "hash mismatch")
	if !strings.Contains(err.Error(), "--plan") {
		t.Fatalf("error %v does not say what to do", err)
	}
}

// run.json's workers and counts must fit the plan, and its plan_hash is never skipped.
func TestManifestCheckedAgainstPlan(t *testing.T) {
	worker := func(i int, k string, v any) func(map[string]any) {
		return func(m map[string]any) { m["workers"].([]any)[i].(map[string]any)[k] = v }
	}
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"planned 1e12", worker(0, "planned", 1_000_000_000_000), "worker 0 has 1000000000000 planned requests; the plan has 8 records"},
		{"shards overlap", worker(1, "planned", 5), "the workers have 9 planned requests or more; the plan has 8"},
		{"counts.planned", func(m map[string]any) { m["counts"].(map[string]any)["planned"] = 1_000_000_000_000 }, "counts.planned 1000000000000"},
		{"negative planned", worker(0, "planned", -1), "want 0 <= lost <= planned"},
		{"log outside the run", worker(0, "log", "../worker-000.rawlog"), "not a file name in the run directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := smallRun(t)
			editManifest(t, dir, c.edit)
			_, err := Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}}, nil)
			wantInputErr(t, err, c.want)
		})
	}
}

// A run.json without plan_hash cannot be checked against the plan: it is refused, never
// analysed against whatever plan is at plan_path.
func TestMissingPlanHash(t *testing.T) {
	dir := smallRun(t)
	editManifest(t, dir, func(m map[string]any) { delete(m, "plan_hash") })
	_, err := Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}}, nil)
	wantInputErr(t, err, "no plan_hash")
}

func hasNote(s *Summary, sub string) bool {
	for _, n := range s.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// Two plan hashes that agree on their first 12 digits are told apart in the message.
func TestHashMismatchMessageDiffers(t *testing.T) {
	a, b := smallRun(t), smallRun(t)
	m, err := rawlog.ReadManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	h := m.PlanHash
	flip := "0"
	if h[20] == '0' {
		flip = "1"
	}
	near := h[:20] + flip + h[21:]
	editManifest(t, b, func(m map[string]any) { m["plan_hash"] = near })
	_, err = Analyze(Options{RunDirs: []string{a, b}, Tokenizer: wordCounter{}}, nil)
	wantInputErr(t, err, "plan "+near[:21]+" differs from")
	if !strings.Contains(err.Error(), "plan "+h[:21]) {
		t.Fatalf("error %v; want both hashes to 21 digits", err)
	}
}

// Damage confined to one worker's log costs that log's requests, not the analysis: the other
// worker is analysed, the damaged log is named in Damaged and in a note.
func TestDamagedWorkerLog(t *testing.T) {
	for _, c := range []struct {
		name      string
		at        func(size int) int // byte of worker-001.rawlog to flip
		wantValid int64
		wantNote  string
	}{
		{"header", func(int) int { return 16 + 8 + 3 }, 4, "its header is unreadable, so its 4 planned requests are counted as lost"},
		{"middle", func(size int) int { return size / 2 }, 4, "what came after it is lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := smallRun(t)
			path := filepath.Join(dir, "worker-001.rawlog")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[c.at(len(b))] ^= 0xFF
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			s, _ := analyseDir(t, Options{}, dir)
			if !reflect.DeepEqual(s.Damaged, []string{path}) || !hasNote(s, "DAMAGED LOG") || !hasNote(s, path) || !hasNote(s, c.wantNote) {
				t.Fatalf("damaged %q, notes %q", s.Damaged, s.Notes)
			}
			// Worker 0 holds requests 0, 2, 4, 6, all whole; worker 1's are lost from the
			// damage on (all of them: a middle byte of 4 records is in the first two).
			if s.Counts.Valid < c.wantValid || s.Counts.Valid+s.Counts.Lost != 8 || s.Counts.Lost == 0 {
				t.Fatalf("counts %+v; want worker 0's 4 valid and the rest lost", s.Counts)
			}
		})
	}
}

// A truncated or garbled run.json is rebuilt from the worker logs' headers: same metrics,
// and a note says so.
func TestRebuildDamagedManifest(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"garbled", func(b []byte) []byte {
			for i := 10; i < len(b); i += 7 {
				b[i] = '#'
			}
			return b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := smallRun(t)
			want, _ := analyseDir(t, Options{}, dir)
			path := filepath.Join(dir, rawlog.ManifestName)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			got, _ := analyseDir(t, Options{}, dir)
			if !hasNote(got, "REBUILT from the headers of 2 worker logs") || !hasNote(got, path) {
				t.Fatalf("notes %q; want the rebuild named", got.Notes)
			}
			if !reflect.DeepEqual(got.Results, want.Results) || got.Counts != want.Counts {
				t.Fatalf("rebuilt run gives other results:\ncounts %+v\nwant   %+v", got.Counts, want.Counts)
			}
			// Nothing is written over the damaged file: it is evidence.
			if after, _ := os.ReadFile(path); string(after) != string(c.damage(b)) {
				t.Fatal("run.json was rewritten")
			}
		})
	}
	// When the logs cannot stand in for it either, the error names both.
	dir := smallRun(t)
	os.WriteFile(filepath.Join(dir, rawlog.ManifestName), []byte("{"), 0o644)
	for _, w := range []string{"worker-000.rawlog", "worker-001.rawlog"} {
		os.WriteFile(filepath.Join(dir, w), []byte("garbage, not a log"), 0o644)
	}
	_, err := Analyze(Options{RunDirs: []string{dir}, Tokenizer: wordCounter{}}, nil)
	wantInputErr(t, err, "rebuilding it from the logs failed too")
}
