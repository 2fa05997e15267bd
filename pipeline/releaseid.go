package pipeline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// releaseOf decides, before the data is read (every table's footer carries
// it), which census release the run counts and the day it was taken:
//
//   - a release with a release.json: its release_date, or else the day
//     its crawl finished (UTC); its release_id names it;
//   - the snapshot (the pinned hashes, or no hashes checked and no other
//     claim): the published snapshot's day;
//   - anything else (a release verified against other sums, a synthetic
//     census): the day opt.ReleaseDate states, or none.
//
// A date the inputs give cannot be restated otherwise: opt.ReleaseDate
// must then equal it. The id is opt.ReleaseID, or else release.json's
// release_id, or else the date.
func releaseOf(opt Options, manifest hashverify.Manifest) (id, date string, err error) {
	if opt.ReleaseID != "" {
		if err := report.CheckReleaseID(opt.ReleaseID); err != nil {
			return "", "", fmt.Errorf("--release-id: %w", err)
		}
	}
	if opt.ReleaseDate != "" {
		if err := report.CheckReleaseDate(opt.ReleaseDate); err != nil {
			return "", "", fmt.Errorf("--release-date: %w", err)
		}
	}
	said, from, named := "", "", ""
	rel, raw, err := release.ReadBytes(opt.Data)
	if err != nil {
		return "", "", err
	}
	truth, _, err := readTruth(opt)
	if err != nil {
		return "", "", err
	}
	switch {
	case rel != nil:
		// A release's publisher may state its id and date in
		// release.json; a crawl's says when it finished.
		var stated struct {
			ID   string `json:"release_id"`
			Date string `json:"release_date"`
		}
		if err := json.Unmarshal(raw, &stated); err != nil {
			return "", "", fmt.Errorf("%s: %w", release.File, err)
		}
		switch {
		case stated.Date != "":
			if err := report.CheckReleaseDate(stated.Date); err != nil {
				return "", "", fmt.Errorf("%s: %w", release.File, err)
			}
			said, from = stated.Date, release.File
		default:
			t, perr := time.Parse(time.RFC3339, rel.Finished)
			if perr != nil {
				return "", "", fmt.Errorf("%s: finished %q is not an RFC 3339 time", release.File, rel.Finished)
			}
			said, from = t.UTC().Format(report.DateLayout), release.File+" (the crawl's end)"
		}
		if stated.ID != "" {
			if err := report.CheckReleaseID(stated.ID); err != nil {
				return "", "", fmt.Errorf("%s: %w", release.File, err)
			}
			named = stated.ID
		}
	case truth != nil:
	case !opt.NoVerify && manifest.IsPinned():
		said, from = report.Published().Snapshot, "the pinned snapshot"
	case opt.NoVerify && opt.ReleaseDate == "":
		// Unchecked files with no other claim are taken for the snapshot
		// (a reproduction, UNVERIFIED), unless a date says otherwise.
		said = report.Published().Snapshot
	}
	date = opt.ReleaseDate
	if said != "" {
		if date != "" && date != said && from != "" {
			return "", "", fmt.Errorf("--release-date %s: the census is of %s, as %s says", date, said, from)
		}
		date = said
	}
	id = cmp.Or(opt.ReleaseID, named, date)
	return id, date, nil
}
