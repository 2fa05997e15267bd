package runners

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// acquireDir holds the cache folder key until release: found complete, or
// filled by fill into a temporary folder of the cache that is renamed to
// key once it is known to fit the bound of one package. Every package type
// shares the cache and its least-recently-used bound this way; fill
// returns the entry point, relative to the folder, that the mark records.
func (c *npmCache) acquireDir(ctx context.Context, key string, fill func(ctx context.Context, tmp string) (string, error)) (installed, error) {
	return c.hold(key, func(dir string) (installed, error) { return c.fillDir(ctx, dir, fill) })
}

// hold holds the cache folder key until release, one filler at a time
// for each key: found complete (its mark touched, for the LRU), or made
// by fill, after which the cache is brought back within its bound.
func (c *npmCache) hold(key string, fill func(dir string) (installed, error)) (installed, error) {
	c.mu.Lock()
	if c.flight == nil {
		c.flight, c.inUse = map[string]*sync.Mutex{}, map[string]int{}
	}
	fl := c.flight[key]
	if fl == nil {
		fl = &sync.Mutex{}
		c.flight[key] = fl
	}
	c.inUse[key]++
	c.mu.Unlock()
	fl.Lock()
	defer fl.Unlock()
	dir := filepath.Join(c.dir, key)
	if main, id, err := readComplete(dir); err == nil {
		now := time.Now()
		_ = os.Chtimes(filepath.Join(dir, completeFile), now, now)
		return installed{key: key, dir: dir, main: main, id: id, cached: true}, nil
	}
	in, err := fill(dir)
	if err != nil {
		c.release(key)
		return installed{}, err
	}
	in.key = key
	c.evict()
	return in, nil
}

func (c *npmCache) fillDir(ctx context.Context, dir string, fill func(ctx context.Context, tmp string) (string, error)) (installed, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return installed{}, err
	}
	_ = os.RemoveAll(dir) // a folder without its mark is a torn install
	tmp, err := os.MkdirTemp(c.dir, ".install-")
	if err != nil {
		return installed{}, err
	}
	defer os.RemoveAll(tmp)
	// The folders are read by the sandbox's unprivileged user.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return installed{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	main, err := fill(ctx, tmp)
	if err != nil {
		if ctx.Err() != nil && ctx.Err() == context.DeadlineExceeded {
			return installed{}, &installError{err: fmt.Errorf("the install did not finish within %v: %v", c.timeout, err)}
		}
		return installed{}, err
	}
	return c.seal(tmp, dir, main)
}

// seal makes the install in tmp the package folder dir, once it is known
// to fit in the package bound: it writes the mark that says the folder is
// whole (its entry point main and its size) and renames it into place.
func (c *npmCache) seal(tmp, dir, main string) (installed, error) {
	size, own, err := dirSizes(tmp)
	if err != nil {
		return installed{}, err
	}
	if size > c.maxPackage {
		return installed{}, &installError{err: fmt.Errorf("installed package takes %d bytes, more than the %d allowed", size, c.maxPackage), settled: true}
	}
	id := rand.Text()
	mark, _ := json.Marshal(map[string]any{"main": main, "size": size, "own": own, "id": id})
	if err := os.WriteFile(filepath.Join(tmp, completeFile), mark, 0o644); err != nil {
		return installed{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return installed{}, err
	}
	return installed{dir: dir, main: main, id: id}, nil
}
