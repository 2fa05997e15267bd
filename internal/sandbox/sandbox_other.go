//go:build !linux

package sandbox

import "os/exec"

// Find fails on these systems; the stubs below are never reached.

const isLinux = false

func setProcAttr(*exec.Cmd) {}

func killTree(int) error { return nil }

func descendants(int) []int { return nil }

func rss(int) int64 { return 0 }

func memfdBytes([]int) int64 { return 0 }

type initProc struct{}

func openInit(int) *initProc { return nil }

func (*initProc) wait() {}

func (*Sandbox) setLimits(int, Limits) error { return nil }

func openStores(int, []store) ([]int, error) { return nil, nil }

func storeBytes([]int) int64 { return 0 }

func closeFDs([]int) {}
