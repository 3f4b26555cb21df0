package bench

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

func TestZipfianSkewAndRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := NewZipfian(1000, zipfianConstant)
	counts := make([]int, 1000)
	for range 200_000 {
		v := z.Next(rng)
		if v < 0 || v >= 1000 {
			t.Fatalf("out of range: %d", v)
		}
		counts[v]++
	}
	// theta 0.99 over 1000 items: item 0 gets about 1/zeta(1000) ~ 13 % of the draws.
	if p := float64(counts[0]) / 200_000; p < 0.11 || p > 0.16 {
		t.Errorf("P(0) = %.3f, want about 0.13", p)
	}
	if counts[0] <= counts[1] || counts[1] <= counts[10] || counts[10] <= counts[900] {
		t.Errorf("not decreasing: %d %d %d %d", counts[0], counts[1], counts[10], counts[900])
	}
}

func TestKeyChoosers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dist := range []string{"uniform", "zipfian", "latest"} {
		k, err := NewKeyChooser(dist, 500, "test:"+dist)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		for range 20_000 {
			v := k.Next(rng)
			if v < 0 || v >= 500 {
				t.Fatalf("%s: out of range %d", dist, v)
			}
			seen[v]++
		}
		if len(seen) < 100 {
			t.Errorf("%s: only %d distinct keys", dist, len(seen))
		}
		if dist == "latest" && seen[499] < seen[0] {
			t.Errorf("latest: newest key drawn %d times, oldest %d", seen[499], seen[0])
		}
		if got := k.NextInsert(); got != 500 {
			t.Errorf("%s: first insert %d, want 500", dist, got)
		}
	}
	if _, err := NewKeyChooser("gauss", 10, "x"); err == nil {
		t.Error("unknown distribution accepted")
	}
}

// Runners inserting under one prefix take disjoint record numbers; the VUs of one runner
// share its sequence; reads and updates only draw loaded records or the runner's own inserts,
// and "latest" favours the runner's newest insert.
func TestRunnerKeyChoosersDisjoint(t *testing.T) {
	const records, runners, vus, inserts = 100, 3, 4, 50
	rng := rand.New(rand.NewPCG(5, 6))
	owner := map[int64]int{} // inserted record -> runner
	for r := range runners {
		var mine []*KeyChooser // one chooser per VU, as each VU builds its own
		for range vus {
			k, err := NewRunnerKeyChooser("latest", records, "test:runners", r, runners)
			if err != nil {
				t.Fatal(err)
			}
			mine = append(mine, k)
		}
		for i := range inserts {
			n := mine[i%vus].NextInsert()
			if prev, dup := owner[n]; dup {
				t.Fatalf("runner %d inserted record %d already inserted by runner %d", r, n, prev)
			}
			if n < records || (n-records)%runners != int64(r) {
				t.Fatalf("runner %d inserted record %d outside its slot", r, n)
			}
			owner[n] = r
		}
		newest := int64(records + (inserts-1)*runners + r)
		counts := map[int64]int{}
		for range 20_000 {
			v := mine[0].Next(rng)
			if v >= records {
				if o, ok := owner[v]; !ok || o != r {
					t.Fatalf("runner %d read record %d it did not insert", r, v)
				}
			}
			counts[v]++
		}
		for v, c := range counts {
			if c > counts[newest] {
				t.Errorf("runner %d: latest drew %d (%d times) more than its newest insert %d (%d times)", r, v, c, newest, counts[newest])
				break
			}
		}
	}
	if len(owner) != runners*inserts {
		t.Errorf("%d distinct inserted records, want %d", len(owner), runners*inserts)
	}
	rng2 := rand.New(rand.NewPCG(7, 8))
	u, _ := NewRunnerKeyChooser("uniform", records, "test:runners-uniform", 1, 2)
	for range 10 {
		u.NextInsert()
	}
	for range 10_000 {
		if v := u.Next(rng2); v < 0 || (v >= records && ((v-records)%2 != 1 || v > records+19)) {
			t.Fatalf("uniform drew %d: neither loaded nor inserted by runner 1 of 2", v)
		}
	}
	for _, bad := range [][2]int{{-1, 2}, {2, 2}, {0, 0}} {
		if _, err := NewRunnerKeyChooser("uniform", 10, "x", bad[0], bad[1]); err == nil {
			t.Errorf("runner %d of %d accepted", bad[0], bad[1])
		}
	}
}

func TestRenderTemplate(t *testing.T) {
	b, holes := renderTemplate([]string{"SET", "key:__rand_int__", "v"}, true)
	if len(holes) != 1 {
		t.Fatalf("holes %v", holes)
	}
	putDigits(b[holes[0]:holes[0]+12], 42)
	if want := "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$1\r\nv\r\n"; string(b) != want {
		t.Fatalf("got %q want %q", b, want)
	}
	if _, holes := renderTemplate([]string{"GET", "__rand_int__"}, false); len(holes) != 0 {
		t.Fatal("placeholder replaced with keyspace 0")
	}
}

func TestPyStr(t *testing.T) {
	for v, want := range map[any]string{nil: "None", int64(0): "0", int64(-3): "-3", "世界收到": "世界收到",
		true: "True", 2.0: "2.0", 0.5: "0.5", uint64(7): "7"} {
		if got := PyStr(v); got != want {
			t.Errorf("PyStr(%#v) = %q, want %q", v, got, want)
		}
	}
}

// fakeRedis answers each request line-by-line with the canned replies.
func fakeRedis(t *testing.T, replies ...string) *Conn {
	t.Helper()
	client, server := net.Pipe()
	go func() {
		r := bufio.NewReader(server)
		for _, rep := range replies {
			// read one RESP array command
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			var n int
			for _, c := range strings.TrimSpace(line[1:]) {
				n = n*10 + int(c-'0')
			}
			for range 2 * n {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
			}
			if _, err := server.Write([]byte(rep)); err != nil {
				return
			}
		}
		_ = server.Close()
	}()
	c := &Conn{conn: client}
	cc := countingConn{Conn: client, c: c}
	c.r, c.w = bufio.NewReader(cc), bufio.NewWriter(cc)
	t.Cleanup(func() { _ = client.Close() })
	return c
}

func TestRESPReplies(t *testing.T) {
	c := fakeRedis(t, "+OK\r\n", "$5\r\nhello\r\n", "$-1\r\n", ":42\r\n",
		"*3\r\n$1\r\na\r\n:1\r\n*-1\r\n", "-WRONGTYPE bad\r\n", "*2\r\n+OK\r\n$3\r\nabc\r\n")
	for _, want := range []any{Status("OK"), "hello", nil, int64(42)} {
		v, err := c.Do("X")
		if err != nil || v != want {
			t.Fatalf("got %#v, %v; want %#v", v, err, want)
		}
	}
	v, err := c.Do("X")
	if l, ok := v.([]any); err != nil || !ok || len(l) != 3 || l[0] != "a" || l[1] != int64(1) || l[2] != nil {
		t.Fatalf("array: %#v %v", v, err)
	}
	_, err = c.Do("X")
	var re RedisError
	if !errors.As(err, &re) || re.Kind() != "WRONGTYPE" || errKind(err) != "WRONGTYPE" {
		t.Fatalf("error reply: %v", err)
	}
	c.WriteCommand("X")
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := c.SkipReply()
	if err != nil || r.Type != '*' || r.Int != 2 {
		t.Fatalf("skip: %+v %v", r, err)
	}
	if s, rcv := c.Bytes(); s == 0 || rcv == 0 {
		t.Fatalf("bytes %d %d", s, rcv)
	}
	if _, err := c.Do("X"); errKind(err) != "eof" && errKind(err) != "closed" {
		t.Fatalf("closed: %v (%s)", err, errKind(err))
	}
}

// The runner slot comes from explicit options, else __ENV, else 0 of 1; bad values fail.
func TestRunnerSlot(t *testing.T) {
	rt := sobek.New()
	opts := func(js string) sobek.Value {
		v, err := rt.RunString("(" + js + ")")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(env, o string, wantIndex, wantCount int, wantErr bool) {
		t.Helper()
		if _, err := rt.RunString("var __ENV = " + env); err != nil {
			t.Fatal(err)
		}
		i, n, err := runnerSlot(rt, opts(o))
		if (err != nil) != wantErr || (!wantErr && (i != wantIndex || n != wantCount)) {
			t.Errorf("env %s opts %s: %d of %d, %v", env, o, i, n, err)
		}
	}
	check(`{}`, `undefined`, 0, 1, false)
	check(`{BENCHRUN_RUNNER_INDEX: "2", BENCHRUN_RUNNER_COUNT: "3"}`, `undefined`, 2, 3, false)
	check(`{BENCHRUN_RUNNER_INDEX: "2", BENCHRUN_RUNNER_COUNT: "3"}`, `{runnerIndex: 0, runnerCount: 1}`, 0, 1, false)
	check(`{BENCHRUN_RUNNER_INDEX: "", BENCHRUN_RUNNER_COUNT: ""}`, `{recordCount: 5}`, 0, 1, false)
	check(`{BENCHRUN_RUNNER_INDEX: "3", BENCHRUN_RUNNER_COUNT: "3"}`, `undefined`, 0, 0, true)
	check(`{BENCHRUN_RUNNER_INDEX: "x"}`, `undefined`, 0, 0, true)
	check(`{}`, `{runnerIndex: 1.5, runnerCount: 2}`, 0, 0, true)
}
