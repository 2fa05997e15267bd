package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// failOn is --fail-on: the classes, and whether an unpinned server, that
// make a config scan's verdict fail.
type failOn struct {
	classes  []string
	unpinned bool
	// changed fails on a tool changed since the lock and not approved.
	changed bool
}

// parseFailOn reads "CLASS,...,unpinned,changed".
func parseFailOn(list string) (failOn, error) {
	var f failOn
	var names []string
	for _, item := range strings.Split(list, ",") {
		switch strings.TrimSpace(strings.ToLower(item)) {
		case "unpinned":
			f.unpinned = true
		case "changed":
			f.changed = true
		default:
			names = append(names, item)
		}
	}
	var err error
	if f.classes, err = classify.ParseClasses(strings.Join(names, ",")); err != nil {
		return f, usageError{"--fail-on: " + err.Error()}
	}
	return f, nil
}

// verdict is the failure --fail-on finds among the servers, or nil.
func (f failOn) verdict(servers []configServer) error {
	var why []string
	for _, s := range servers {
		if f.unpinned && s.Unpinned && !s.Disabled && s.UnpinnedSuppressed == nil {
			why = append(why, termtext.Safe(fmt.Sprintf("%s:%d: %s is unpinned", s.File, s.Line, s.Name)))
		}
		if f.changed && !s.ChangesApproved {
			for _, c := range s.Changes {
				why = append(why, termtext.Safe(fmt.Sprintf("%s:%d: %s tool %s %s", s.File, s.Line, s.Name, toolid.ToolName(c.Tool()), c.Kind)))
			}
		}
		for _, t := range s.Tools {
			for _, c := range t.Classes {
				if slices.Contains(f.classes, c) {
					why = append(why, termtext.Safe(fmt.Sprintf("%s:%d: %s tool %s is %s", s.File, s.Line, s.Name, t.Name, c)))
				}
			}
		}
	}
	if len(why) == 0 {
		return nil
	}
	return verdictError{fmt.Sprintf("--fail-on: %d findings:\n  %s", len(why), strings.Join(why, "\n  "))}
}
