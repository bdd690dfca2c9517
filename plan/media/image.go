package media

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // --image-source directories may hold GIFs
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
)

// jpegQuality is the quality synthetic JPEGs are encoded at (PIL's default).
const jpegQuality = 75

// image makes image number key: its size drawn from the width and height distributions,
// its format from --image-format, its pixels random noise or a source file resized.
func (g *Generator) image(key uint64) (Item, error) {
	o := &g.o.Image
	r := rand.New(rand.NewPCG(g.imageSeed, key))
	w := min(normalInt(r, o.WidthMean, o.WidthStddev), maxSide)
	h := min(normalInt(r, o.HeightMean, o.HeightStddev), maxSide)
	format := o.Format
	if format == "random" {
		format = [2]string{"png", "jpeg"}[r.IntN(2)]
	}
	var img *image.RGBA
	if g.files == nil {
		img = noiseImage(r, w, h)
	} else {
		path := g.pick(key, r)
		src, err := decodeFile(path)
		if err != nil {
			return Item{}, err
		}
		img = resize(src, w, h)
	}
	// Noise does not compress: storing it uncompressed costs 20 times less time for the
	// same size. Source images do, at the fastest level.
	data, err := Encode(img, format, g.files != nil)
	if err != nil {
		return Item{}, err
	}
	return Item{Kind: Image, Format: format, MIME: mimeOf(Image, format), Data: data, Width: w, Height: h}, nil
}

// pick chooses the source file of image key by --image-source-sampling.
func (g *Generator) pick(key uint64, r *rand.Rand) string {
	n := uint64(len(g.files))
	switch g.o.Image.Sampling {
	case "sequential-cycle":
		return g.files[key%n]
	case "shuffle-cycle":
		// Each cycle through the files has its own permutation, drawn from the cycle's number.
		cr := rand.New(rand.NewPCG(g.permSeed, key/n))
		return g.files[cr.Perm(int(n))[key%n]]
	}
	return g.files[r.IntN(int(n))]
}

// noiseImage returns w×h opaque pixels of uniform random colour.
func noiseImage(r *rand.Rand, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	p := img.Pix
	for i := 0; i+8 <= len(p); i += 8 { // two pixels per draw
		v := r.Uint64()
		p[i], p[i+1], p[i+2], p[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
		p[i+4], p[i+5], p[i+6], p[i+7] = byte(v>>24), byte(v>>32), byte(v>>40), 0xff
	}
	if len(p)%8 != 0 { // an odd pixel count leaves one
		v := r.Uint32()
		i := len(p) - 4
		p[i], p[i+1], p[i+2], p[i+3] = byte(v), byte(v>>8), byte(v>>16), 0xff
	}
	return img
}

// decodeFile reads and decodes an image file.
func decodeFile(path string) (image.Image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("media: %s: not a decodable image: %w", path, err)
	}
	return img, nil
}

// resize scales src to w×h by nearest neighbour, made opaque.
func resize(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		sy := b.Min.Y + y*b.Dy()/h
		for x := range w {
			sx := b.Min.X + x*b.Dx()/w
			cr, cg, cb, _ := src.At(sx, sy).RGBA()
			i := dst.PixOffset(x, y)
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = byte(cr>>8), byte(cg>>8), byte(cb>>8), 0xff
		}
	}
	return dst
}

// Encode encodes img as png (deflated at the fastest level when compress is set, else
// stored) or jpeg. The bytes depend only on the pixels and compress.
func Encode(img image.Image, format string, compress bool) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		enc := png.Encoder{CompressionLevel: png.NoCompression}
		if compress {
			enc.CompressionLevel = png.BestSpeed
		}
		err = enc.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	default:
		return nil, fmt.Errorf("media: image format %q: want png or jpeg", format)
	}
	if err != nil {
		return nil, fmt.Errorf("media: encode %s: %w", format, err)
	}
	return buf.Bytes(), nil
}
