package rawlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The log's payloads are plain msgpack (any msgpack library can read them), but encoded and
// decoded here by hand for the handful of types they use: the writer sits on replay's path and
// must not allocate, and the reader must keep up with millions of records.

func appendArrayHeader(b []byte, n int) []byte {
	if n < 16 {
		return append(b, 0x90|byte(n))
	}
	return append(b, 0xdc, byte(n>>8), byte(n))
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 128:
		return append(b, byte(v))
	case v < 0 && v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		b = append(b, 0xd2)
		return binary.BigEndian.AppendUint32(b, uint32(v))
	}
	b = append(b, 0xd3)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

func appendBinHeader(b []byte, n int) []byte {
	switch {
	case n < 1<<8:
		return append(b, 0xc4, byte(n))
	case n < 1<<16:
		return append(b, 0xc5, byte(n>>8), byte(n))
	}
	b = append(b, 0xc6)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func appendBin(b []byte, p []byte) []byte {
	return append(appendBinHeader(b, len(p)), p...)
}

func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, 0xd9, byte(n))
	case n < 1<<16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return append(b, s...)
}

var errShort = errors.New("payload ends inside a value")

// decoder walks one payload. Errors stick: after the first, every call returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail(errShort)
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) byte1() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) arrayLen() int {
	c := d.byte1()
	switch {
	case d.err != nil:
		return 0
	case c&0xf0 == 0x90:
		return int(c & 0x0f)
	case c == 0xdc:
		p := d.take(2)
		if p == nil {
			return 0
		}
		return int(binary.BigEndian.Uint16(p))
	}
	d.fail(fmt.Errorf("want an array, found type byte 0x%02x", c))
	return 0
}

func (d *decoder) int() int64 {
	c := d.byte1()
	if d.err != nil {
		return 0
	}
	switch {
	case c < 0x80:
		return int64(c)
	case c >= 0xe0:
		return int64(int8(c))
	}
	var size int
	switch c {
	case 0xcc, 0xd0:
		size = 1
	case 0xcd, 0xd1:
		size = 2
	case 0xce, 0xd2:
		size = 4
	case 0xcf, 0xd3:
		size = 8
	default:
		d.fail(fmt.Errorf("want an integer, found type byte 0x%02x", c))
		return 0
	}
	p := d.take(size)
	if p == nil {
		return 0
	}
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	if c >= 0xd0 { // signed: sign-extend
		shift := 64 - 8*size
		return int64(u<<shift) >> shift
	}
	return int64(u)
}

func (d *decoder) bool() bool {
	switch c := d.byte1(); {
	case d.err != nil:
		return false
	case c == 0xc3:
		return true
	case c == 0xc2:
		return false
	default:
		d.fail(fmt.Errorf("want a bool, found type byte 0x%02x", c))
		return false
	}
}

// raw reads a bin or str value without copying.
func (d *decoder) raw() []byte {
	c := d.byte1()
	if d.err != nil {
		return nil
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xc4 || c == 0xd9:
		n = int(d.byte1())
	case c == 0xc5 || c == 0xda:
		p := d.take(2)
		if p == nil {
			return nil
		}
		n = int(binary.BigEndian.Uint16(p))
	case c == 0xc6 || c == 0xdb:
		p := d.take(4)
		if p == nil {
			return nil
		}
		n = int(binary.BigEndian.Uint32(p))
	case c == 0xc0:
		return nil
	default:
		d.fail(fmt.Errorf("want bytes or a string, found type byte 0x%02x", c))
		return nil
	}
	return d.take(n)
}

func (d *decoder) str() string {
	p := d.raw()
	if len(p) == 0 {
		return ""
	}
	return string(p)
}
