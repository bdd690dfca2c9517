package cli

import (
	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/plan/media"
)

// addMediaFlags defines AIPerf's image, audio and video input flags, with its defaults, on
// fs, filling o (plan and profile share them through the plan flag set).
func addMediaFlags(fs *pflag.FlagSet, o *media.Options) {
	d := media.DefaultOptions()
	*o = d
	im, au, vi := &o.Image, &o.Audio, &o.Video
	fs.Float64Var(&im.WidthMean, "image-width-mean", 0, "synthetic image width in pixels (mean; 0: no images)")
	fs.Float64Var(&im.WidthStddev, "image-width-stddev", 0, "synthetic image width (stddev)")
	fs.Float64Var(&im.HeightMean, "image-height-mean", 0, "synthetic image height in pixels (mean; 0: no images)")
	fs.Float64Var(&im.HeightStddev, "image-height-stddev", 0, "synthetic image height (stddev)")
	fs.IntVar(&im.BatchSize, "image-batch-size", d.Image.BatchSize, "images per request")
	fs.StringVar(&im.Format, "image-format", d.Image.Format, "png|jpeg|random (drawn per image)")
	fs.StringVar(&im.Source, "image-source", d.Image.Source, "noise (random pixels) or a directory of images, resized to the drawn size")
	fs.StringVar(&im.Sampling, "image-source-sampling", d.Image.Sampling, "how --image-source files are picked: random-with-replacement|shuffle-cycle|sequential-cycle")

	fs.Float64Var(&au.LengthMean, "audio-length-mean", 0, "synthetic audio clip seconds (mean; 0: no audio)")
	fs.Float64Var(&au.LengthStddev, "audio-length-stddev", 0, "synthetic audio clip seconds (stddev)")
	fs.StringVar(&au.Format, "audio-format", d.Audio.Format, "wav|mp3 (mp3 needs ffmpeg with libmp3lame)")
	fs.IntSliceVar(&au.Depths, "audio-depths", d.Audio.Depths, "bit depths drawn from, per clip (8,16,24,32)")
	fs.Float64SliceVar(&au.SampleRates, "audio-sample-rates", d.Audio.SampleRates, "sample rates in kHz drawn from, per clip")
	fs.IntVar(&au.NumChannels, "audio-num-channels", d.Audio.NumChannels, "1 or 2")
	fs.IntVar(&au.BatchSize, "audio-batch-size", d.Audio.BatchSize, "audio clips per request")

	fs.IntVar(&vi.Width, "video-width", 0, "synthetic video frame width (0: no video; needs ffmpeg at plan time)")
	fs.IntVar(&vi.Height, "video-height", 0, "synthetic video frame height (0: no video)")
	fs.Float64Var(&vi.FPS, "video-fps", d.Video.FPS, "video frames per second")
	fs.Float64Var(&vi.Duration, "video-duration", d.Video.Duration, "video seconds")
	fs.StringVar(&vi.SynthType, "video-synth-type", d.Video.SynthType, "moving_shapes|grid_clock|noise")
	fs.StringVar(&vi.Format, "video-format", d.Video.Format, "webm|mp4")
	fs.StringVar(&vi.Codec, "video-codec", "", `ffmpeg encoder, e.g. libvpx-vp9, libx264, h264_nvenc ("": libvpx-vp9 for webm, libx264 for mp4)`)
	fs.IntVar(&vi.BatchSize, "video-batch-size", d.Video.BatchSize, "videos per request")
}

// mediaFlagNames are the flags addMediaFlags defines.
var mediaFlagNames = []string{
	"image-width-mean", "image-width-stddev", "image-height-mean", "image-height-stddev", "image-batch-size",
	"image-format", "image-source", "image-source-sampling",
	"audio-length-mean", "audio-length-stddev", "audio-format", "audio-depths", "audio-sample-rates",
	"audio-num-channels", "audio-batch-size",
	"video-width", "video-height", "video-fps", "video-duration", "video-synth-type", "video-format",
	"video-codec", "video-batch-size",
}

// dropMediaSpec leaves the media flags out of a plan's spec when the plan makes no
// synthetic media, so a text plan's spec, hence its bytes and hash, are what they were
// before these flags existed.
func dropMediaSpec(spec map[string]any, o *media.Options) {
	if o.Enabled() {
		return
	}
	for _, n := range mediaFlagNames {
		delete(spec, n)
	}
}
