package main

import (
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// classesFlag is every flag that takes classes (diff --fail-on, proxy
// --hide and --deny): comma-separated, repeatable, each class spelled as
// classify.ParseClasses reads it (gg:command-string, command-string,
// command_string). It holds the class ids, each once; a bad name fails the
// parse, which the flag package reports as a usage error.
type classesFlag []string

func (c *classesFlag) String() string { return strings.Join(*c, ",") }

func (c *classesFlag) Set(v string) error {
	ids, err := classify.ParseClasses(v)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(*c, id) {
			*c = append(*c, id)
		}
	}
	return nil
}
