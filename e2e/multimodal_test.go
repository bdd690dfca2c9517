package e2e_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// multimodalArgs plan streaming chat requests with 2 synthetic images and one 1.5 s audio
// clip each.
func multimodalArgs(extra ...string) []string {
	return append([]string{"--model", "mock", "--tokenizer", "builtin", "--endpoint-type", "chat", "--streaming",
		"--use-server-token-count", "--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "4",
		"--extra-inputs", "ignore_eos:true", "--request-count", "8", "--num-dataset-entries", "4", "--random-seed", "5",
		"--image-width-mean", "32", "--image-height-mean", "24", "--image-batch-size", "2", "--image-format", "random",
		"--audio-length-mean", "1.5"}, extra...)
}

// A chat plan with 2 images and 1 audio clip per request runs end to end against mockllm,
// and the multimodal metrics (num_images, image_throughput, image_latency, audio_duration,
// rtfx, usage_prompt_audio_tokens) are in every export with their exact values; two
// compiles with one seed are byte-identical.
func TestMultimodalChain(t *testing.T) {
	dir := t.TempDir()
	mock := startMock(t, "--ttft", "5ms", "--itl", "1ms", "--image-tokens", "100", "--audio-tokens-per-second", "10")
	planPath := compile(t, dir, multimodalArgs()...)
	again := filepath.Join(dir, "again.plan")
	if r := command(t, bin.plan, append(multimodalArgs(), "-o", again)...); r.code != 0 {
		t.Fatalf("plan: %s", r.stderr)
	}
	a, _ := os.ReadFile(planPath)
	b, _ := os.ReadFile(again)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("two plans with one seed differ")
	}
	insp := command(t, bin.plan, "inspect", "--json", "--requests", "1", planPath)
	var s struct {
		Media struct {
			Requests, Images, Audios int
			AudioSeconds             float64 `json:"audio_seconds"`
		} `json:"media"`
		Requests []struct {
			ISL   int `json:"isl"`
			Media struct {
				Images int `json:"images"`
				Items  []struct {
					Kind  string `json:"kind"`
					Bytes int    `json:"bytes"`
				} `json:"items"`
			} `json:"media"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(insp.stdout), &s); err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if s.Media.Requests != 8 || s.Media.Images != 16 || s.Media.Audios != 8 || s.Media.AudioSeconds != 12 ||
		len(s.Requests) != 1 || len(s.Requests[0].Media.Items) != 3 || s.Requests[0].Media.Items[2].Kind != "audio" || s.Requests[0].Media.Items[0].Bytes == 0 {
		t.Fatalf("plan inspect media: %+v", s)
	}
	isl := float64(s.Requests[0].ISL)

	run := replayPlan(t, dir, planPath, []string{mock.URL})
	out := filepath.Join(dir, "out")
	if code := analyzeRun(t, run, out); code != 0 {
		t.Fatalf("analyze exit %d", code)
	}
	// JSON: every request sent 2 images and 1.5 s of audio; mockllm counted 100 tokens per
	// image and 10 per second of audio on top of the text.
	sum := readSummary(t, out)
	for tag, want := range map[string]float64{"num_images": 2, "audio_duration": 1.5, "usage_prompt_audio_tokens": 15,
		"usage_prompt_tokens": isl + 215, "input_sequence_length": isl} {
		if st := sum.must(t, tag); st.Avg != want || *st.Min != want || *st.Max != want {
			t.Errorf("%s: avg %v min %v max %v, want %v", tag, st.Avg, *st.Min, *st.Max, want)
		}
	}
	lat := sum.must(t, "request_latency").Avg
	for tag, want := range map[string]float64{"image_throughput": 2 / (lat / 1e3), "image_latency": lat / 2, "rtfx": 1.5 / (lat / 1e3)} {
		// Averages of per-request ratios are not ratios of averages: compare loosely here,
		// exactly per request below.
		if st := sum.must(t, tag); st.Avg <= 0 || math.Abs(st.Avg-want)/want > 0.5 {
			t.Errorf("%s: avg %v, want about %v", tag, st.Avg, want)
		}
	}
	// JSONL: the per-request formulas.
	recs := readRecords(t, out)
	if len(recs) != 8 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		l, _ := r.num("request_latency")
		n, _ := r.num("num_images")
		thr, _ := r.num("image_throughput")
		il, _ := r.num("image_latency")
		ad, _ := r.num("audio_duration")
		rtfx, _ := r.num("rtfx")
		if n != 2 || ad != 1.5 || math.Abs(thr-2/(l/1e3)) > 1e-6*thr || math.Abs(il-l/2) > 1e-9*il || math.Abs(rtfx-1.5/(l/1e3)) > 1e-6*rtfx {
			t.Fatalf("request %d: latency %v num_images %v image_throughput %v image_latency %v audio_duration %v rtfx %v",
				r.Metadata.RequestIndex, l, n, thr, il, ad, rtfx)
		}
	}
	// CSV: a row per metric.
	f, err := os.Open(filepath.Join(out, "profile_export_aiperf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Number of Images (images)": "2.00", "Audio Duration (sec)": "1.50", "Usage Prompt Audio Tokens (tokens)": "15.00",
		"Image Throughput (images/sec)": "", "Image Latency (ms/image)": "", "RTFx (ratio)": ""}
	for _, row := range rows {
		if w, ok := want[row[0]]; ok {
			if w != "" && row[1] != w {
				t.Errorf("CSV %s avg %s, want %s", row[0], row[1], w)
			}
			if v, err := strconv.ParseFloat(row[1], 64); err != nil || v <= 0 {
				t.Errorf("CSV %s avg %q", row[0], row[1])
			}
			delete(want, row[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("CSV lacks %v", want)
	}
	// Console: the multimodal rows are printed.
	con := command(t, bin.analyze, "--output-dir", filepath.Join(dir, "out2"), run)
	for _, row := range []string{"Number of Images", "Image Throughput", "Image Latency", "Audio Duration", "RTFx"} {
		if !strings.Contains(con.stdout, row) {
			t.Errorf("console lacks %s:\n%s", row, con.stdout)
		}
	}
}

// A video plan (ffmpeg at plan time) runs against mockllm, which checks each video's
// container and counts its tokens. Skipped, saying so, where ffmpeg is not installed.
func TestMultimodalVideo(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg): the video plan test needs it at plan time")
	}
	dir := t.TempDir()
	mock := startMock(t, "--ttft", "5ms", "--itl", "1ms", "--video-tokens", "500")
	planPath := compile(t, dir, "--model", "mock", "--tokenizer", "builtin", "--use-server-token-count",
		"--synthetic-input-tokens-mean", "16", "--output-tokens-mean", "4", "--extra-inputs", "ignore_eos:true",
		"--request-count", "3", "--num-dataset-entries", "3", "--video-width", "32", "--video-height", "24",
		"--video-duration", "1", "--video-fps", "4", "--video-synth-type", "grid_clock")
	insp := command(t, bin.plan, "inspect", planPath)
	if !strings.Contains(insp.stdout, "0 audio clips (0.0 s), 3 videos") {
		t.Fatalf("inspect:\n%s", insp.stdout)
	}
	run := replayPlan(t, dir, planPath, []string{mock.URL})
	out := filepath.Join(dir, "out")
	if code := analyzeRun(t, run, out); code != 0 {
		t.Fatalf("analyze exit %d", code)
	}
	sum := readSummary(t, out)
	isl := sum.must(t, "input_sequence_length").Avg
	if st := sum.must(t, "usage_prompt_tokens"); st.Avg != isl+500 || sum.must(t, "request_count").Avg != 3 {
		t.Fatalf("usage_prompt_tokens %v, want ISL %v + 500 per video", st.Avg, isl)
	}
}
