// Package archtest holds no code: its tests hold the import rules that
// ARCHITECTURE.md states, package by package, with go list, and read the
// crawl's Go source for the one dispatch on a registry type (the runners'
// table).
package archtest
