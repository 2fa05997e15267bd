package main

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// TestMemoryRoom checks run's --memory-limit: its parsing, and that
// GOMEMLIMIT stands unless the flag is given.
func TestMemoryRoom(t *testing.T) {
	for _, c := range []struct {
		name, arg, env string
		want           int64
		bad            bool
	}{
		{name: "default", want: pipeline.DefaultMemoryRoom},
		{name: "default under GOMEMLIMIT", env: "200MiB", want: 0},
		{name: "given", arg: "1000", want: 1000},
		{name: "given under GOMEMLIMIT", arg: "1000", env: "200MiB", want: 1000},
		{name: "none", arg: "0", want: 0},
		{name: "negative", arg: "-1", bad: true},
		{name: "not a number", arg: "1G", bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", c.env)
			m := memoryRoom{bytes: pipeline.DefaultMemoryRoom}
			if c.arg != "" {
				err := m.Set(c.arg)
				if (err != nil) != c.bad {
					t.Fatalf("Set(%q): error %v, want error %v", c.arg, err, c.bad)
				}
				if c.bad {
					return
				}
			}
			if got := m.room(); got != c.want {
				t.Errorf("room %d, want %d", got, c.want)
			}
		})
	}
}
