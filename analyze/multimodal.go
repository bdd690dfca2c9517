package analyze

import (
	"github.com/llmbench/llmbench/endpoint"
	"github.com/llmbench/llmbench/mmapds"
)

// Multimodal metrics (AIPerf §5.6, docs/metrics.md "Multimodal"): what a request sent comes
// from its plan media entry (mmapds.MediaEntry), how long it took from its latency.
//
//	num_images        images in the request
//	image_throughput  num_images / request_latency (s)
//	image_latency     request_latency (ms) / num_images
//	audio_duration    seconds of input audio
//	rtfx              audio_duration / request_latency (s), the ASR real-time factor

// Display units of the multimodal metrics.
const (
	unitImages     = "images"
	unitImagesPS   = "images/sec"
	unitMsPerImage = "ms/image"
)

// mediaMetrics sets the multimodal metrics of m, a request planned with media entry e
// (nil: it sent none), and its usage audio fields. Latency-based ones need a valid request.
func mediaMetrics(m *requestMetrics, e *mmapds.MediaEntry) {
	if u := &m.Usage; u.Has&endpoint.UsagePromptAudio != 0 {
		m.set(MUsagePromptAudioTokens, float64(u.PromptAudioTokens))
	}
	if u := &m.Usage; u.Has&endpoint.UsageCompletionAudio != 0 {
		m.set(MUsageCompletionAudioTokens, float64(u.CompletionAudioTokens))
	}
	if e == nil {
		return
	}
	latNs := m.Values[MRequestLatency]
	valid := m.Valid && m.Has[MRequestLatency] && latNs > 0
	if e.Images > 0 {
		m.set(MNumImages, float64(e.Images))
		if valid {
			m.set(MImageThroughput, float64(e.Images)/(latNs/1e9))
			m.set(MImageLatency, latNs/float64(e.Images))
		}
	}
	if e.AudioSeconds > 0 {
		m.set(MAudioDuration, e.AudioSeconds*1e9)
		if valid {
			m.set(MRTFX, e.AudioSeconds/(latNs/1e9))
		}
	}
}
