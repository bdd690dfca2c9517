package analyze

// Multimodal metrics (AIPerf §5.6, docs/metrics.md "Multimodal"): what a request sent comes
// from its plan media entry (mmapds.MediaEntry), how long it took from its latency. Their
// formulas are in perrequest.go, with the other built-in metrics'.
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
