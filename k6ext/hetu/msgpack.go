package hetu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The msgpack subset HeTu uses (Python msgpack.packb / unpackb(raw=False)): nil, bool,
// integers, floats, str, bin, arrays and maps. Decoded values map to Go as: nil, bool, int64
// (uint64 above MaxInt64), float64, string (str), []byte (bin), []any and map[string]any
// (non-string keys such as HeTu's integer row ids are formatted in decimal).

// errShort reports a truncated msgpack value.
var errShort = errors.New("msgpack: truncated data")

// appendMsgpack appends the msgpack encoding of v to b.
func appendMsgpack(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, 0xc0), nil
	case bool:
		if x {
			return append(b, 0xc3), nil
		}
		return append(b, 0xc2), nil
	case int:
		return appendInt(b, int64(x)), nil
	case int32:
		return appendInt(b, int64(x)), nil
	case int64:
		return appendInt(b, x), nil
	case uint64:
		if x <= math.MaxInt64 {
			return appendInt(b, int64(x)), nil
		}
		b = append(b, 0xcf)
		return binary.BigEndian.AppendUint64(b, x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			// JS numbers that are integers go out as msgpack ints, as Python ints would.
			return appendInt(b, int64(x)), nil
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x)), nil
	case float32:
		return appendMsgpack(b, float64(x))
	case string:
		return appendStr(b, x), nil
	case []byte:
		n := len(x)
		switch {
		case n < 1<<8:
			b = append(b, 0xc4, byte(n))
		case n < 1<<16:
			b = append(b, 0xc5)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xc6)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return append(b, x...), nil
	case []any:
		b = appendLen(b, len(x), 0x90, 0xdc, 0xdd)
		var err error
		for _, e := range x {
			if b, err = appendMsgpack(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case []string:
		b = appendLen(b, len(x), 0x90, 0xdc, 0xdd)
		for _, e := range x {
			b = appendStr(b, e)
		}
		return b, nil
	case map[string]any:
		b = appendLen(b, len(x), 0x80, 0xde, 0xdf)
		var err error
		for k, e := range x {
			b = appendStr(b, k)
			if b, err = appendMsgpack(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("msgpack: cannot encode %T", v)
}

// appendInt appends the shortest msgpack encoding of n.
func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n < 128:
		return append(b, byte(n))
	case n < 0 && n >= -32:
		return append(b, byte(n))
	case n >= 0 && n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// appendStr appends a msgpack str.
func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, 0xd9, byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// appendLen appends an array or map header (fix, 16-bit or 32-bit form).
func appendLen(b []byte, n int, fix, c16, c32 byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n < 1<<16:
		return binary.BigEndian.AppendUint16(append(b, c16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, c32), uint32(n))
}

// unmarshalMsgpack decodes exactly one msgpack value from b.
func unmarshalMsgpack(b []byte) (any, error) {
	d := decoder{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("msgpack: %d trailing bytes", len(b)-d.off)
	}
	return v, nil
}

// maxDepth bounds nesting so a hostile frame cannot exhaust the stack.
const maxDepth = 64

// decoder reads msgpack values from b.
type decoder struct {
	b   []byte
	off int
}

// take returns the next n bytes.
func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || len(d.b)-d.off < n {
		return nil, errShort
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p, nil
}

// uint reads an n-byte big-endian unsigned integer.
func (d *decoder) uint(n int) (uint64, error) {
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// value decodes one value.
func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("msgpack: nesting too deep")
	}
	p, err := d.take(1)
	if err != nil {
		return nil, err
	}
	c := p[0]
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c&0xe0 == 0xa0:
		return d.str(int(c & 0x1f))
	case c&0xf0 == 0x90:
		return d.array(int(c&0x0f), depth)
	case c&0xf0 == 0x80:
		return d.mapping(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6:
		n, err := d.uint(1 << (c - 0xc4))
		if err != nil {
			return nil, err
		}
		p, err := d.take(int(n))
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), p...), nil
	case 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3:
		return d.number(c)
	case 0xd9, 0xda, 0xdb:
		n, err := d.uint(1 << (c - 0xd9))
		if err != nil {
			return nil, err
		}
		return d.str(int(n))
	case 0xdc, 0xdd:
		n, err := d.uint(2 << (c - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.array(int(n), depth)
	case 0xde, 0xdf:
		n, err := d.uint(2 << (c - 0xde))
		if err != nil {
			return nil, err
		}
		return d.mapping(int(n), depth)
	}
	return nil, fmt.Errorf("msgpack: unsupported type byte 0x%02x", c)
}

// number decodes the payload of a float (0xca, 0xcb) or an int (0xcc-0xd3) type byte.
func (d *decoder) number(c byte) (any, error) {
	switch c {
	case 0xca:
		v, err := d.uint(4)
		return float64(math.Float32frombits(uint32(v))), err
	case 0xcb:
		v, err := d.uint(8)
		return math.Float64frombits(v), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		v, err := d.uint(1 << (c - 0xcc))
		if err != nil {
			return nil, err
		}
		if v > math.MaxInt64 {
			return v, nil
		}
		return int64(v), nil
	case 0xd0:
		v, err := d.uint(1)
		return int64(int8(v)), err
	case 0xd1:
		v, err := d.uint(2)
		return int64(int16(v)), err
	case 0xd2:
		v, err := d.uint(4)
		return int64(int32(v)), err
	case 0xd3:
		v, err := d.uint(8)
		return int64(v), err
	}
	return nil, fmt.Errorf("msgpack: unsupported type byte 0x%02x", c)
}

// str decodes a str payload of n bytes.
func (d *decoder) str(n int) (any, error) {
	p, err := d.take(n)
	if err != nil {
		return nil, err
	}
	return string(p), nil
}

// array decodes n elements.
func (d *decoder) array(n int, depth int) (any, error) {
	if n > len(d.b)-d.off { // every element takes at least one byte
		return nil, errShort
	}
	out := make([]any, n)
	for i := range out {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// mapping decodes n key/value pairs; keys become strings.
func (d *decoder) mapping(n int, depth int) (any, error) {
	if n > (len(d.b)-d.off)/2 {
		return nil, errShort
	}
	out := make(map[string]any, n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[keyString(k)] = v
	}
	return out, nil
}

// keyString formats a decoded map key.
func keyString(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(k)
}
