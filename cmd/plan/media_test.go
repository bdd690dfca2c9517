package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The image, audio and video flags refuse bad values in one line naming the flag (exit 2),
// and media an endpoint type cannot carry is refused the same way.
func TestMediaFlagErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.plan")
	m := []string{"--model", "m", "--tokenizer", "builtin", "-o", out}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-format", "webp"}, `--image-format "webp": want png, jpeg or random`},
		{[]string{"--image-width-mean", "-5"}, "--image-width-mean must be in [0,16384]"},
		{[]string{"--image-source", filepath.Join(dir, "none")}, "--image-source"},
		{[]string{"--image-source-sampling", "lottery"}, "--image-source-sampling"},
		{[]string{"--audio-depths", "12"}, "--audio-depths 12: want 8, 16, 24 or 32"},
		{[]string{"--audio-depths", "x"}, `invalid argument "x"`},
		{[]string{"--audio-sample-rates", "0.5"}, "--audio-sample-rates 0.5"},
		{[]string{"--audio-num-channels", "3"}, "--audio-num-channels 3"},
		{[]string{"--audio-format", "flac"}, `--audio-format "flac"`},
		{[]string{"--video-synth-type", "fire"}, "--video-synth-type"},
		{[]string{"--video-format", "avi"}, "--video-format"},
		{[]string{"--video-width", "33", "--video-height", "32"}, "must be even"},
		{[]string{"--image-batch-size", "100"}, "--image-batch-size must be in [0,64]"},
		{[]string{"--endpoint-type", "completions", "--image-width-mean", "8", "--image-height-mean", "8"}, "image inputs are not supported by this API type"},
	} {
		code, stdout, stderr := runCmd(t, append(c.args, m...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "plan: ") || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}
