package main

import "embed"

// helpFiles are the commands' usage lines and descriptions, one text file
// a command, where they read (and are edited) as the prose they are
// rather than as concatenated string literals.
//
//go:embed help/*.txt
var helpFiles embed.FS

// synopsis is command name's usage line and description, from
// help/NAME.txt. A command without one is a build mistake, caught by any
// test that parses its flags.
func synopsis(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("atlas-reproduce: no help/" + name + ".txt")
	}
	return string(b)
}
