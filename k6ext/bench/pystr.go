package bench

import (
	"fmt"
	"math"
	"strconv"
)

// PyStr formats a decoded value the way Python's str() does for the values benchmarks
// return, so return-value distributions match the seeds: ints as "0", strings as they are,
// None/True/False, floats in repr form.
func PyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return smallInt(int64(x))
	case int8:
		return smallInt(int64(x))
	case int16:
		return smallInt(int64(x))
	case int32:
		return smallInt(int64(x))
	case int64:
		return smallInt(x)
	case uint8:
		return smallInt(int64(x))
	case uint16:
		return smallInt(int64(x))
	case uint32:
		return smallInt(int64(x))
	case uint64:
		return strconv.FormatUint(x, 10)
	case float32:
		return pyFloat(float64(x))
	case float64:
		return pyFloat(x)
	}
	return fmt.Sprint(v)
}

// smallInts caches the strings of small integers, the usual return values (retry counts).
var smallInts = func() [256]string {
	var a [256]string
	for i := range a {
		a[i] = strconv.Itoa(i)
	}
	return a
}()

// smallInt formats n, without allocating for 0..255.
func smallInt(n int64) string {
	if n >= 0 && n < int64(len(smallInts)) {
		return smallInts[n]
	}
	return strconv.FormatInt(n, 10)
}

// pyFloat formats f like Python's repr of a float.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == math.Trunc(f) && math.Abs(f) < 1e16:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
