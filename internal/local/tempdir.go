package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchrun/benchrun/api/v1alpha1"
	"github.com/benchrun/benchrun/internal/target"
)

// ownerFile names the owner of a target's temporary directory. It is written once the
// directory is locked, so a directory that has it and whose lock is free lost its owner.
const ownerFile = ".benchrun-owner"

// tempPrefixes are the name prefixes of the temporary directories local targets make: in
// Options.TempDir (servers' files, HeTu logs) and in the HeTu runtime's srv/ (app copies):
// benchrun-<kind>- for every target kind (a new kind's directories are covered), and
// benchrun-valkey- (a Redis target's directory is named after its engine).
var tempPrefixes = func() []string {
	out := []string{"benchrun-" + string(v1alpha1.EngineValkey) + "-"}
	for _, k := range target.Kinds {
		out = append(out, "benchrun-"+k.Field+"-")
	}
	return out
}()

// errLocked is returned by lockDir when another open file holds the lock.
var errLocked = errors.New("locked")

// ownedDir is a temporary directory this process holds an exclusive flock(2) on (taken on the
// directory itself) from its creation until remove. The kernel drops the lock when the
// process dies, even by SIGKILL, which tells the next `benchrun run` the directory is stale.
type ownedDir struct {
	path string
	lock *os.File // nil when the file system has no flock: the owner's pid is checked instead
}

// makeOwnedDir creates a directory named prefix+random in parent, locks it and writes its
// owner file.
func makeOwnedDir(parent, prefix string) (*ownedDir, error) {
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, err
	}
	d := &ownedDir{path: dir}
	f, err := os.Open(dir) // close-on-exec: children never hold the lock
	if err == nil {
		// Blocking: a concurrent RemoveStale may hold the lock for a moment (it leaves a
		// directory without owner file alone).
		if err = lockDir(f, true); err == nil {
			d.lock = f
		} else {
			_ = f.Close()
		}
	}
	if err != nil && !errors.Is(err, syscall.ENOLCK) && !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.EINVAL) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	owner := fmt.Sprintf("%d\nbenchrun run, started %s\n", os.Getpid(), time.Now().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
		_ = d.remove()
		return nil, err
	}
	return d, nil
}

// remove deletes the directory, then releases its lock.
func (d *ownedDir) remove() error {
	err := os.RemoveAll(d.path)
	if d.lock != nil {
		_ = d.lock.Close()
		d.lock = nil
	}
	return err
}

// lockDir takes an exclusive flock on f; without wait it fails with errLocked when the lock
// is held.
func lockDir(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}

// RemoveStale removes the temporary directories that local targets of benchrun processes no
// longer alive left behind (a run killed by SIGKILL cannot clean up): those in
// opts.TempDir (default os.TempDir()) and in the HeTu runtime's srv/ whose owner file exists
// and whose lock is free (or, on file systems without flock, whose owner pid is gone).
// Directories without (readable) owner file are being created, were made by an older
// benchrun or belong to another user, and are kept. It returns the directories removed.
func RemoveStale(opts Options) ([]string, error) {
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.HeTuRootfs == "" {
		opts.HeTuRootfs = DefaultHeTuRootfs()
	}
	var removed []string
	var errs []error
	for _, parent := range []string{opts.TempDir, filepath.Join(opts.HeTuRootfs, "srv")} {
		entries, err := os.ReadDir(parent)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !hasTempPrefix(e.Name()) {
				continue
			}
			dir := filepath.Join(parent, e.Name())
			ok, err := removeIfStale(dir)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", dir, err))
			}
			if ok {
				removed = append(removed, dir)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// hasTempPrefix reports whether name is one of a local target's temporary directories.
func hasTempPrefix(name string) bool {
	for _, p := range tempPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// removeIfStale removes dir when its owner is gone and reports whether it did.
func removeIfStale(dir string) (bool, error) {
	owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return false, nil // being created, made by an older benchrun, or another user's
		}
		return false, err
	}
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // removed meanwhile by its owner
		}
		return false, err
	}
	defer func() { _ = f.Close() }()
	switch err := lockDir(f, false); {
	case errors.Is(err, errLocked):
		return false, nil
	case err != nil: // no flock here: judge by the owner's pid
		pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(owner), "\n", 2)[0]))
		if pid <= 0 || pidAlive(pid) {
			return false, nil
		}
	}
	// The lock is ours (or the owner is dead): remove the directory while holding it.
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, nil
}

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
