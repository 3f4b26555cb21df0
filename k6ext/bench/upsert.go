package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"
)

// maxUpsertAttempts bounds the optimistic retries of one upsert.
const maxUpsertAttempts = 1000

// errTooManyRetries is returned when an upsert keeps conflicting.
var errTooManyRetries = errors.New("upsert: too many conflicts")

// upserter implements HeTu's backend upsert on plain Redis: rows are hashes
// PREFIX row:<id> {id, number, name}, the unique index on number is the sorted set
// PREFIX idx:number (score number, member id), ids come from PREFIX seq. An upsert looks
// the row up by the index, WATCHes what it read, and commits the update (or the insert
// with its index entry) in MULTI/EXEC, retrying when EXEC reports a conflict.
// Every attempt ends with exactly one EXEC, so attempts add up to Redis' EXEC count.
type upserter struct {
	prefix   string
	keyspace int64
}

// run performs one upsert of number and returns the attempts it took (1 = no conflict).
func (u *upserter) run(c *Conn, rng *rand.Rand, number int64) (int64, error) {
	idx := u.prefix + "idx:number"
	n := strconv.FormatInt(number, 10)
	var name [3]byte
	for attempt := int64(1); attempt <= maxUpsertAttempts; attempt++ {
		for i := range name {
			name[i] = 'a' + byte(rng.IntN(26))
		}
		// Lookup by the unique index, under WATCH so a concurrent insert of the same number
		// makes our insert fail instead of duplicating the row.
		c.WriteCommand("WATCH", idx)
		c.WriteCommand("ZRANGE", idx, n, n, "BYSCORE", "LIMIT", "0", "1")
		if err := c.Flush(); err != nil {
			return attempt, err
		}
		if _, err := expectOK(c); err != nil {
			return attempt, err
		}
		ids, err := c.ReadReply()
		if err != nil {
			return attempt, err
		}
		list, _ := ids.([]any)
		queued := 0
		if len(list) > 0 {
			row := u.prefix + "row:" + str(list[0])
			// Update: read the row under WATCH, then commit the new name. The index key is
			// unwatched first so inserts of other numbers do not conflict with us.
			c.WriteCommand("UNWATCH")
			c.WriteCommand("WATCH", row)
			c.WriteCommand("HGET", row, "name")
			if err := c.Flush(); err != nil {
				return attempt, err
			}
			for range 2 {
				if _, err := expectOK(c); err != nil {
					return attempt, err
				}
			}
			if _, err := c.SkipReply(); err != nil {
				return attempt, err
			}
			c.WriteCommand("MULTI")
			c.WriteCommand("HSET", row, "name", string(name[:]))
			c.WriteCommand("EXEC")
			queued = 1
		} else {
			// Insert: allocate an id, then commit the row and its index entry.
			id, err := c.Do("INCR", u.prefix+"seq")
			if err != nil {
				return attempt, err
			}
			ids := PyStr(id)
			row := u.prefix + "row:" + ids
			c.WriteCommand("MULTI")
			c.WriteCommand("HSET", row, "id", ids, "number", n, "name", string(name[:]))
			c.WriteCommand("ZADD", idx, n, ids)
			c.WriteCommand("EXEC")
			queued = 2
		}
		if err := c.Flush(); err != nil {
			return attempt, err
		}
		committed, err := readExec(c, queued)
		if err != nil {
			return attempt, err
		}
		if committed {
			return attempt, nil
		}
	}
	return maxUpsertAttempts, errTooManyRetries
}

// expectOK reads a reply that must not be an error.
func expectOK(c *Conn) (Reply, error) {
	r, err := c.SkipReply()
	if err == nil {
		err = r.Err()
	}
	return r, err
}

// readExec reads the replies of MULTI, the queued commands and EXEC, and reports whether
// EXEC committed (false: a watched key changed).
func readExec(c *Conn, queued int) (bool, error) {
	var first error
	for range 1 + queued {
		r, err := c.SkipReply()
		if err != nil {
			return false, err
		}
		if e := r.Err(); e != nil && first == nil {
			first = e
		}
	}
	r, err := c.SkipReply()
	if err != nil {
		return false, err
	}
	if first != nil {
		return false, first
	}
	if err := r.Err(); err != nil {
		return false, err
	}
	return !r.IsNil(), nil
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
