package tables

import (
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"io"
	"maps"
	"slices"
)

// WriteClasses writes classes.parquet: the class table beside the
// published one, then the buckets (normative = false), with meta as
// NewToolsWriter.
func WriteClasses(w io.Writer, r *report.Report, meta ...KV) error {
	t, err := newTable[classesBatch]("classes.parquet", w, batchRows, classesColumns(), meta...)
	if err != nil {
		return err
	}
	row := func(b *classesBatch, id string, normative bool, tools int64, pct float64, req *int64, ptools int64, ppct float64, preq *int64, dt int64, dr *int64) {
		b.Label.Append([]byte(id))
		b.Normative = append(b.Normative, normative)
		b.Tools = append(b.Tools, tools)
		b.Percent = append(b.Percent, pct)
		b.Required.append(req)
		b.PublishedTools = append(b.PublishedTools, ptools)
		b.PublishedPercent = append(b.PublishedPercent, ppct)
		b.PublishedRequired.append(preq)
		b.Delta = append(b.Delta, dt)
		b.DeltaRequired.append(dr)
	}
	var rows classesBatch
	for _, id := range r.ClassOrder {
		c := r.Classes[id]
		row(&rows, id, true, c.Tools, c.Percent, &c.Required, c.Published.Tools, c.Published.Percent, &c.Published.Required, c.DeltaTools, &c.DeltaRequired)
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		bk := r.Buckets[id]
		row(&rows, id, false, bk.Tools, bk.Percent, nil, bk.Published, bk.PublishedPercent, nil, bk.DeltaTools, nil)
	}
	// The table has a dozen rows: one row group, taken whole.
	if err := t.append(rows.Len(), func(buf *classesBatch, _, _ int) { *buf = rows }); err != nil {
		t.Close()
		return err
	}
	return t.Close()
}
