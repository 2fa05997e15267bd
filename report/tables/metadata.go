package tables

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Key-value metadata every table carries in its footer, so that a file
// found alone says what made it.
const (
	// MetaVersion is the build that wrote the file (as `atlas-reproduce
	// version` prints it).
	MetaVersion = "atlas-reproduce.version"
	// MetaRules names the labelling rules: the spec's class set and a
	// digest of every rule's id, normativity and patterns, which changes
	// whenever a rule does.
	MetaRules = "atlas-reproduce.rules"
	// MetaSource says what the table was made from (the census release
	// and how it was verified); set by the writer's caller.
	MetaSource = "atlas-reproduce.source"
)

// KV is one key-value pair of a table's file metadata.
type KV struct{ Key, Value string }

// Source is the MetaSource pair.
func Source(s string) KV { return KV{MetaSource, s} }

// RulesID identifies the labelling rules: "gg-parameter-risk-classes
// sha256:" and the first 16 hex digits of a digest of the rules.
func RulesID() string {
	h := sha256.New()
	for _, r := range classify.Rules() {
		fmt.Fprintf(h, "%s\x00%v\x00%s\x00", r.ID, r.Normative, strings.Join(r.Patterns, "\x00"))
	}
	return "gg-parameter-risk-classes sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// createdBy is the footer's created_by, in the form Parquet readers parse:
// "<application> version <version> (build <revision>)".
func createdBy() string {
	bi := buildinfo.Read()
	s := "atlas-reproduce version " + bi.Version
	if bi.Revision != "" {
		rev := bi.Revision
		if bi.Modified {
			rev += "-modified"
		}
		s += " (build " + rev + ")"
	}
	return s
}

// fileMetadata is the footer's key-value metadata: the version and rules,
// then the caller's pairs.
func fileMetadata(extra []KV) (metadata.KeyValueMetadata, error) {
	kv := metadata.NewKeyValueMetadata()
	pairs := append([]KV{{MetaVersion, buildinfo.Read().String()}, {MetaRules, RulesID()}}, extra...)
	for _, p := range pairs {
		if err := kv.Append(p.Key, strings.ToValidUTF8(p.Value, "\uFFFD")); err != nil {
			return nil, err
		}
	}
	return kv, nil
}
