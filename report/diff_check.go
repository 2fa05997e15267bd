package report

import "fmt"

// CheckTables checks the two report.json a diff read against the
// tools.parquet its tool-level comparison read (td): a folder whose report
// and table are of different runs, or a report.json edited by hand, must
// not be printed as one run. The old table's rows are its tools removed,
// changed and unchanged, the new one's its tools added, changed and
// unchanged; and each class's change between the two reports is the tools
// that gained it less those that lost it. oldName and newName name the
// two folders in the error.
func CheckTables(old, new *Report, td *ToolDiff, oldName, newName string) error {
	t := td.Tools
	for _, side := range []struct {
		name        string
		report, tab int64
	}{
		{oldName, old.Tools, t.Removed + t.Changed + t.Unchanged},
		{newName, new.Tools, t.Added + t.Changed + t.Unchanged},
	} {
		if side.report != side.tab {
			return fmt.Errorf("%s: report.json counts %d tools, but its tools.parquet holds %d: they are not of one run", side.name, side.report, side.tab)
		}
	}
	for _, id := range ClassOrder() {
		oc, ok1 := old.Classes[id]
		nc, ok2 := new.Classes[id]
		if !ok1 || !ok2 {
			continue
		}
		if got, want := nc.Tools-oc.Tools, td.ClassesGained[id]-td.ClassesLost[id]; got != want {
			return fmt.Errorf("%s and %s: report.json counts %+d tools with %s, but the tools.parquet files %+d: a report.json is not of its folder's run", oldName, newName, got, id, want)
		}
	}
	return nil
}
