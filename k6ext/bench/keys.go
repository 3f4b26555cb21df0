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

// KeyChooser picks record numbers for YCSB operations. With several runners (k6 processes)
// inserting under the same prefix, runner i of n inserts records+i, records+i+n,
// records+i+2n, ... so no two runners write the same new key; within a process the VUs
// share one insert sequence (a Go counter), so they do not collide either. Reads and updates
// draw from the loaded records and this runner's own inserts.
type KeyChooser struct {
	dist          string
	records       int64
	zipf          *Zipfian
	inserted      *atomic.Int64 // this runner's inserts so far (shared by the VUs of the process)
	index, stride int64         // runner index and runner count
	scrambled     bool
}

// insertCounters hold the insert sequences, shared by the VUs of a process, per key prefix
// and runner.
var insertCounters sync.Map

// NewKeyChooser returns a chooser over records [0, records) plus the records inserted under
// prefix, for a single runner. dist is "uniform", "zipfian" (scrambled, YCSB's default) or
// "latest".
func NewKeyChooser(dist string, records int64, prefix string) (*KeyChooser, error) {
	return NewRunnerKeyChooser(dist, records, prefix, 0, 1)
}

// NewRunnerKeyChooser is NewKeyChooser for runner index (0-based) of count runners inserting
// under the same prefix: its inserts take every count-th record number after the loaded ones,
// starting at records+index, and "latest" favours the records this runner inserted last.
func NewRunnerKeyChooser(dist string, records int64, prefix string, index, count int) (*KeyChooser, error) {
	if records <= 0 {
		return nil, fmt.Errorf("record count must be > 0, got %d", records)
	}
	if count < 1 || index < 0 || index >= count {
		return nil, fmt.Errorf("runner %d of %d: want 0 <= index < count", index, count)
	}
	c, _ := insertCounters.LoadOrStore(fmt.Sprintf("%s\x00%d/%d", prefix, index, count), new(atomic.Int64))
	k := &KeyChooser{dist: dist, records: records, inserted: c.(*atomic.Int64), index: int64(index), stride: int64(count)}
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

// record maps i, a position in this runner's view of the table (the loaded records, then its
// own inserts in order), to a record number.
func (k *KeyChooser) record(i int64) int64 {
	if i < k.records {
		return i
	}
	return k.records + (i-k.records)*k.stride + k.index
}

// Next returns the record number of the next read or update.
func (k *KeyChooser) Next(rng *rand.Rand) int64 {
	total := k.records + k.inserted.Load()
	switch {
	case k.zipf == nil:
		return k.record(rng.Int64N(total))
	case k.scrambled:
		return int64(fnv64(uint64(k.zipf.Next(rng))) % uint64(k.records))
	default: // latest: the records this runner inserted most recently are the most popular
		return k.record(max(total-1-k.zipf.Next(rng), 0))
	}
}

// NextInsert returns the record number of the next insert.
func (k *KeyChooser) NextInsert() int64 { return k.record(k.records + k.inserted.Add(1) - 1) }

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
