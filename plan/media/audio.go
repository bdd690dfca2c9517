package media

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// wavHeaderSize is the size of the canonical RIFF/WAVE header WAV writes.
const wavHeaderSize = 44

// audio makes clip number key: duration from the length distribution, depth and sample
// rate drawn from the lists, white noise samples.
func (g *Generator) audio(key uint64) (Item, error) {
	o := &g.o.Audio
	r := rand.New(rand.NewPCG(g.audioSeed, key))
	sec := o.LengthMean
	if o.LengthStddev > 0 {
		sec += r.NormFloat64() * o.LengthStddev
	}
	sec = min(max(sec, 0.01), maxSeconds) // AIPerf floors durations at 10 ms
	depth := o.Depths[r.IntN(len(o.Depths))]
	rate := int(math.Round(o.SampleRates[r.IntN(len(o.SampleRates))] * 1000))
	frames := int(math.Round(sec * float64(rate)))
	wav := WAV(r, frames, rate, depth, o.NumChannels)
	it := Item{Kind: Audio, Format: "wav", MIME: "audio/wav", Data: wav, Seconds: float64(frames) / float64(rate)}
	if o.Format == "mp3" {
		mp3, err := g.toMP3(wav)
		if err != nil {
			return Item{}, err
		}
		it.Format, it.MIME, it.Data = "mp3", mimeOf(Audio, "mp3"), mp3
	}
	return it, nil
}

// WAV returns a PCM WAV file of frames random samples per channel at rate Hz and depth
// bits (8: unsigned, else signed little-endian).
func WAV(r *rand.Rand, frames, rate, depth, channels int) []byte {
	bps := depth / 8
	n := frames * channels * bps
	b := make([]byte, wavHeaderSize+n)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], uint16(channels))
	le.PutUint32(b[24:], uint32(rate))
	le.PutUint32(b[28:], uint32(rate*channels*bps))
	le.PutUint16(b[32:], uint16(channels*bps))
	le.PutUint16(b[34:], uint16(depth))
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(n))
	p := b[wavHeaderSize:]
	for i := 0; i < len(p); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// toMP3 encodes a WAV file as MP3 through ffmpeg's libmp3lame.
func (g *Generator) toMP3(wav []byte) ([]byte, error) {
	out, err := runFFmpeg(g.ffmpeg, wav, "mp3", "-f", "wav", "-i", "pipe:0", "-c:a", "libmp3lame", "-b:a", "128k")
	if err != nil {
		return nil, fmt.Errorf("--audio-format mp3: %w", err)
	}
	return out, nil
}
