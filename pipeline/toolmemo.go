package pipeline

import (
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// toolResult is everything a tool's rows and counts take from its text
// beyond the decoded fields: its hashes, classes, what the sensitivity
// variants add and its surface mask. Each is a function of the tool's raw
// bytes alone (classify, sensitivity and toolid read only the decoded
// tool, which the decoder reads from Raw), which is what lets a worker
// compute it once per tool text its decoder remembers.
type toolResult struct {
	// sums holds the hashes once known; batched is 1 + the tool's index
	// in its worker's toolid.Batch while they wait for the batch's Hash
	// (HasSchema is known at once), and 0 after.
	sums             toolid.Sums
	batched          int32
	labels, required classify.Set
	added            sensitivity.Added
	surface          uint8
}

// textResult is what a remembered tool text gave: its toolResult and its
// properties' classes.
type textResult struct {
	res    toolResult
	labels []classify.Set
}
