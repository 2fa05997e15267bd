// The generator of ../block8_amd64.s is a module of its own, as avo
// generators are, so that the main module does not depend on avo.
module github.com/atlas-reproduce/atlas-reproduce/internal/sha256x8/asm

go 1.26.8

require (
	github.com/atlas-reproduce/atlas-reproduce v0.0.0
	github.com/mmcloughlin/avo v0.5.0
)

require (
	golang.org/x/mod v0.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.2.0 // indirect
)

replace github.com/atlas-reproduce/atlas-reproduce => ../../..
