package sandbox

import "time"

// watchEvery is how often the watch sums the sandbox's memory.
const watchEvery = 20 * time.Millisecond

// watch sums the memory the sandbox holds, the resident memory of its
// processes (bwrap's descendants: the PID namespace's init adopts its
// orphans, so none escapes the tree), the bytes of its memory-backed
// folders and of the memfd files its processes hold open, and kills the
// sandbox when they pass the bound. This is the
// bound where no delegated cgroup is at hand: a process can pass it by
// what it takes within one period. The folders' sizes add up within the
// bound (args), so they alone never pass it.
func (c *Cmd) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		c.sample()
		select {
		case <-c.done:
			return
		case <-t.C:
		}
	}
}

// sample takes one count; c.mu is taken for the watch's fields.
func (c *Cmd) sample() {
	if c.Cmd.Process == nil {
		return
	}
	pids := descendants(c.Cmd.Process.Pid)
	var sum int64
	for _, p := range pids {
		sum += rss(p)
	}
	sum += memfdBytes(pids)
	c.mu.Lock()
	for _, p := range pids {
		c.pids[p] = true
	}
	if c.init == nil && len(pids) > 0 {
		c.init = openInit(pids[0])
	}
	// The folders are mounted once the init has forked the program:
	// bwrap lets it go only after its last mount.
	if c.storeFDs == nil && !c.ended && len(pids) > 1 {
		if fds, err := openStores(pids[0], c.stores); err == nil {
			c.storeFDs = fds
		}
	}
	sum += storeBytes(c.storeFDs)
	c.peak = max(c.peak, sum)
	over := sum > c.mem && !c.overMem
	if over {
		c.overMem = true
	}
	c.mu.Unlock()
	if over {
		_ = c.kill()
	}
}

// closeStores lets the folders go once the sandbox has ended; c.mu is
// held.
func (c *Cmd) closeStores() {
	c.ended = true
	closeFDs(c.storeFDs)
	c.storeFDs = nil
}

// kill kills the init of the sandbox's PID namespace, bwrap's child: the
// kernel then kills every process of the namespace. Before the namespace
// exists, bwrap's process group is killed instead.
func (c *Cmd) kill() error {
	if c.Cmd.Process == nil {
		return nil
	}
	return killTree(c.Cmd.Process.Pid)
}
