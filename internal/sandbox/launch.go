package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// launch starts bwrap and holds the sandbox before its program runs: bwrap
// reads its arguments from one pipe (and its seccomp filter, seccomp.go,
// from a fourth), names the sandbox's first process on a second and waits
// on a third. Between the two, the host sets that
// process's limits (Sandbox.setLimits), which every process of the sandbox
// inherits. So nothing runs inside before the program, and no program of
// an image root (its /etc/ld.so.preload, its loader) sees the sandbox
// unbounded.
func (c *Cmd) launch() error {
	var ends [8]*os.File // args, info, block and seccomp: read and write ends
	for i := 0; i < 8; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ends[:i])
			return err
		}
		ends[i], ends[i+1] = r, w
	}
	argsR, argsW, infoR, infoW, blockR, blockW, filterR, filterW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5], ends[6], ends[7]
	// The filter is a few hundred bytes: the pipe holds it whole.
	_, err := filterW.Write(c.sb.filter)
	filterW.Close()
	if err != nil {
		closeAll([]*os.File{argsR, argsW, infoR, infoW, blockR, blockW, filterR})
		return err
	}
	c.Cmd.ExtraFiles = []*os.File{argsR, infoW, blockR, filterR}
	err = c.Cmd.Start()
	closeAll([]*os.File{argsR, infoW, blockR, filterR})
	if err != nil {
		closeAll([]*os.File{argsW, infoR, blockW})
		return err
	}
	go func() {
		// bwrap reads them all before anything else; a bwrap that died
		// leaves EPIPE, and its own error is Wait's.
		_, _ = argsW.Write(c.argData)
		argsW.Close()
	}()
	pid, ok, err := childPID(infoR)
	infoR.Close()
	if err == nil && ok {
		err = c.sb.setLimits(pid, c.limits)
		if errors.Is(err, syscall.ESRCH) {
			err = nil // bwrap failed in its setup: Wait says why
		}
	}
	if err != nil {
		// Killed before it is let go: the program never runs unbounded.
		_ = c.kill()
		blockW.Close()
		_ = c.Cmd.Wait()
		return fmt.Errorf("sandbox: setting the limits of the sandbox: %w", err)
	}
	_, _ = blockW.Write([]byte{1})
	blockW.Close()
	return nil
}

// childPID reads the host process id of the sandbox's first process from
// bwrap's --info-fd. ok is false when bwrap ended before it made one (a
// bad argument, a namespace refused): Wait then returns its error.
func childPID(r io.Reader) (pid int, ok bool, err error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<16))
	if err != nil {
		return 0, false, err
	}
	if len(b) == 0 {
		return 0, false, nil
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.ChildPID <= 0 {
		return 0, false, fmt.Errorf("bwrap's --info-fd said %q, want its child-pid", b)
	}
	return info.ChildPID, true, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
