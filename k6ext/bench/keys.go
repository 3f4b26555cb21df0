package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// zipfianConstant is YCSB's default skew.
const zipfianConstant = 0.99

// Zipfian draws integers in [0, n) with a Zipfian distribution (popular items first), using
// the algorithm of Gray et al., "Quickly Generating Billion-Record Synthetic Databases", as
// YCSB's ZipfianGenerator does.
type Zipfian struct {
	n                        int64
	theta, alpha, zetan, eta float64
	half                     float64
}

// NewZipfian returns a Zipfian generator over [0, n) with skew theta.
func NewZipfian(n int64, theta float64) *Zipfian {
	return newZipfianZeta(n, theta, zeta(n, theta))
}

// newZipfianZeta is NewZipfian with zeta(n, theta) given.
func newZipfianZeta(n int64, theta, zetan float64) *Zipfian {
	zeta2 := 1 + math.Pow(0.5, theta)
	return &Zipfian{
		n:     n,
		theta: theta,
		alpha: 1 / (1 - theta),
		zetan: zetan,
		eta:   (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
		half:  math.Pow(0.5, theta),
	}
}

// Next draws one value.
func (z *Zipfian) Next(rng *rand.Rand) int64 {
	u := rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+z.half {
		return 1
	}
	v := int64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if v >= z.n {
		v = z.n - 1
	}
	return v
}

// zetaCache memoises zeta(n, theta), an O(n) sum shared by every VU.
var zetaCache sync.Map

// zeta returns sum_{i=1..n} 1/i^theta.
func zeta(n int64, theta float64) float64 {
	key := fmt.Sprint(n, theta)
	if v, ok := zetaCache.Load(key); ok {
		return v.(float64)
	}
	var s float64
	for i := int64(1); i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	zetaCache.Store(key, s)
	return s
}

// scrambledItems and scrambledZeta are YCSB's ScrambledZipfianGenerator constants: a
// Zipfian over 10^10 items whose draws are hashed onto the key range, so popular keys are
// spread over the key space.
const (
	scrambledItems = 10_000_000_000
	scrambledZeta  = 26.46902820178302
)

// KeyChooser picks record numbers for YCSB operations.
type KeyChooser struct {
	dist      string
	records   int64
	zipf      *Zipfian
	inserted  *atomic.Int64 // records inserted so far beyond the loaded ones (shared)
	scrambled bool
}

// insertCounters hold the insert sequences, shared by the VUs of a process, per key prefix.
var insertCounters sync.Map

// NewKeyChooser returns a chooser over records [0, records) plus the records inserted under
// prefix. dist is "uniform", "zipfian" (scrambled, YCSB's default) or "latest".
func NewKeyChooser(dist string, records int64, prefix string) (*KeyChooser, error) {
	if records <= 0 {
		return nil, fmt.Errorf("record count must be > 0, got %d", records)
	}
	c, _ := insertCounters.LoadOrStore(prefix, new(atomic.Int64))
	k := &KeyChooser{dist: dist, records: records, inserted: c.(*atomic.Int64)}
	switch dist {
	case "uniform":
	case "zipfian":
		k.zipf = newZipfianZeta(scrambledItems, zipfianConstant, scrambledZeta)
		k.scrambled = true
	case "latest":
		k.zipf = NewZipfian(records, zipfianConstant)
	default:
		return nil, fmt.Errorf("unknown distribution %q (uniform, zipfian, latest)", dist)
	}
	return k, nil
}

// Next returns the record number of the next read or update.
func (k *KeyChooser) Next(rng *rand.Rand) int64 {
	total := k.records + k.inserted.Load()
	switch {
	case k.zipf == nil:
		return rng.Int64N(total)
	case k.scrambled:
		return int64(fnv64(uint64(k.zipf.Next(rng))) % uint64(k.records))
	default: // latest: the most recently inserted records are the most popular
		v := total - 1 - k.zipf.Next(rng)
		if v < 0 {
			v = 0
		}
		return v
	}
}

// NextInsert returns the record number of the next insert.
func (k *KeyChooser) NextInsert() int64 { return k.records + k.inserted.Add(1) - 1 }

// fnv64 is YCSB's FNV-1a 64-bit hash of a long (Utils.fnvhash64).
func fnv64(v uint64) uint64 {
	const offset, prime = 0xCBF29CE484222325, 1099511628211
	h := uint64(offset)
	for range 8 {
		octet := v & 0xff
		v >>= 8
		h ^= octet
		h *= prime
	}
	return h
}
