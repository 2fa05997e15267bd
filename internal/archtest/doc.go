// Package archtest holds no code: its test holds the import rules that
// ARCHITECTURE.md states, package by package, with go list.
package archtest
