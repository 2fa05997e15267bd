package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
)

// readRelease reads the data folder's release.json, for the report to show
// how a crawl release was made. When the manifest lists it (a crawl's
// SHA256SUMS does), its hash is checked like the data's: provenance that
// does not match its manifest is not shown as the release's.
func readRelease(data string, manifest hashverify.Manifest, verify bool) (*release.Release, error) {
	rel, b, err := release.ReadBytes(data)
	if err != nil || rel == nil {
		return nil, err
	}
	if _, listed := manifest[release.File]; verify && listed {
		h := sha256.Sum256(b)
		if err := manifest.Check(release.File, hex.EncodeToString(h[:])); err != nil {
			return nil, fmt.Errorf("verification failed, no report written: %w", err)
		}
	}
	return rel, nil
}
