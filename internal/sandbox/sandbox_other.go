//go:build !linux

package sandbox

import "os/exec"

// Find fails on these systems; the stubs below are never reached.

func setProcAttr(*exec.Cmd) {}

func killTree(c *exec.Cmd) error {
	if c.Process == nil {
		return nil
	}
	return c.Process.Kill()
}

func killPID(int) {}
