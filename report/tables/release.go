package tables

// Key-value metadata naming the census release a table counts, so that a
// file found alone, or read with many others, says which release and day
// its rows are of.
const (
	// MetaReleaseID is the release's id (report.json's release_id).
	MetaReleaseID = "atlas-reproduce.release_id"
	// MetaReleaseDate is the day the census was taken, YYYY-MM-DD (UTC;
	// report.json's release_date).
	MetaReleaseDate = "atlas-reproduce.release_date"
)

// Release returns the pairs naming a release: none for an empty id or
// date, so that a run that knows neither writes the footer it always did.
func Release(id, date string) []KV {
	var kv []KV
	if id != "" {
		kv = append(kv, KV{MetaReleaseID, id})
	}
	if date != "" {
		kv = append(kv, KV{MetaReleaseDate, date})
	}
	return kv
}
