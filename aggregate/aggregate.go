// Package aggregate holds the census counters. Each pipeline worker owns one
// Counters and updates it without locks; the workers' counters are merged
// once, at the end of the run.
package aggregate

import (
	"hash/maphash"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// labelBits is the number of label bits counted: the five classes and the
// two buckets, bits 0..6 of a classify.Set.
const labelBits = 7

// ServerKey identifies a server id by two independent 64-bit hashes: a set
// of 16-byte keys stays small however long the ids are, and a collision
// (probability about n²/2^129) cannot change a count in practice.
type ServerKey [2]uint64

// Hasher turns server ids into keys. One Hasher serves all workers of a run
// so that their keys agree; it is safe for concurrent use.
type Hasher struct{ a, b maphash.Seed }

// NewHasher returns a Hasher with fresh seeds.
func NewHasher() *Hasher { return &Hasher{maphash.MakeSeed(), maphash.MakeSeed()} }

// Key returns the key of a server id.
func (h *Hasher) Key(id []byte) ServerKey {
	return ServerKey{maphash.Bytes(h.a, id), maphash.Bytes(h.b, id)}
}

// Counters are the census counts.
type Counters struct {
	// Tools is the number of tools.
	Tools int64
	// Properties is the number of enumerated properties.
	Properties int64
	// Labels counts tools carrying each label, indexed by bit position.
	Labels [labelBits]int64
	// Required counts tools with a required property carrying each label.
	Required [labelBits]int64
	// Shapes counts records by shape name.
	Shapes map[string]int64
	// Servers holds the distinct server ids of tools, each with flags: bit i
	// is set when a tool counted under server-counting figure i is on that
	// server. One map serves every distinct-server count, so each id is held
	// once however many figures count servers.
	Servers map[ServerKey]uint8
	// Surface counts tools per tool-surface figure, by figure id.
	Surface map[string]int64
}

// New returns empty Counters.
func New() *Counters {
	return &Counters{
		Shapes:  map[string]int64{},
		Servers: map[ServerKey]uint8{},
		Surface: map[string]int64{},
	}
}

// AddTool counts one tool: labels is the union of its properties' labels,
// required the union over its required properties. Its server id, if any,
// is recorded apart with AddServer.
func (c *Counters) AddTool(labels, required classify.Set, properties int) {
	c.Tools++
	c.Properties += int64(properties)
	for i := 0; i < labelBits; i++ {
		bit := classify.Set(1) << i
		if labels&bit != 0 {
			c.Labels[i]++
		}
		if required&bit != 0 {
			c.Required[i]++
		}
	}
}

// AddServer records a server id with figure flags, without counting a tool.
// A pipeline adds servers in its one sink goroutine rather than in every
// worker, so that a run holds one set of server ids instead of one per
// worker.
func (c *Counters) AddServer(server ServerKey, flags uint8) { c.Servers[server] |= flags }

// AddSurface counts one tool under a tool-surface figure.
func (c *Counters) AddSurface(id string) { c.Surface[id]++ }

// ServersWith returns the number of distinct servers with every bit of
// flags set.
func (c *Counters) ServersWith(flags uint8) int64 {
	var n int64
	for _, f := range c.Servers {
		if f&flags == flags {
			n++
		}
	}
	return n
}

// Merge adds o into c.
func (c *Counters) Merge(o *Counters) {
	c.Tools += o.Tools
	c.Properties += o.Properties
	for i := range c.Labels {
		c.Labels[i] += o.Labels[i]
		c.Required[i] += o.Required[i]
	}
	for k, v := range o.Shapes {
		c.Shapes[k] += v
	}
	for k, f := range o.Servers {
		c.Servers[k] |= f
	}
	for k, v := range o.Surface {
		c.Surface[k] += v
	}
}

// Label returns the tool count and the required count of a single label.
func (c *Counters) Label(bit classify.Set) (tools, required int64) {
	for i := 0; i < labelBits; i++ {
		if bit == classify.Set(1)<<i {
			return c.Labels[i], c.Required[i]
		}
	}
	return 0, 0
}
