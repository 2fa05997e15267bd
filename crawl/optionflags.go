package crawl

import (
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// optionFlag is one flag of crawl as release.Options records it, so that
// a refusal names the flag and its two values in words.
type optionFlag struct {
	flag  string
	value func(release.Options) string
	// record says the flag can change a record (merge holds shards to
	// it); the others only schedule the crawl.
	record bool
}

// optionFlags are every flag release.Options records, in --help's order.
var optionFlags = []optionFlag{
	{"--timeout", func(o release.Options) string { return o.Timeout }, true},
	{"--max-tools", func(o release.Options) string { return fmt.Sprint(o.MaxTools) }, true},
	{"--max-bytes", func(o release.Options) string { return byteSize(o.MaxBytes) }, true},
	{"--max-pages", func(o release.Options) string { return fmt.Sprint(o.MaxPages) }, true},
	{"--allow-private", func(o release.Options) string { return onOff(o.AllowPrivate) }, true},
	{"--no-elapsed", func(o release.Options) string { return onOff(o.OmitElapsed) }, true},
	{"--no-packages", func(o release.Options) string { return onOff(o.NoPackages) }, true},
	{"--sandbox-memory", func(o release.Options) string { return byteSize(o.SandboxMemory) }, true},
	{"--concurrency", func(o release.Options) string { return fmt.Sprint(o.Concurrency) }, false},
	{"--per-host", func(o release.Options) string { return fmt.Sprint(o.PerHost) }, false},
	{"--max-memory", func(o release.Options) string { return byteSize(o.MaxMemory) }, false},
	{"--package-concurrency", func(o release.Options) string { return fmt.Sprint(o.PackageConcurrency) }, false},
	{"--shard", func(o release.Options) string { return o.Shard }, false},
	{"--reuse-package-records", func(o release.Options) string { return onOff(o.ReusePackageRecords) }, false},
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}
