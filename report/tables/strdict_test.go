package tables

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mapIndices is dictionaryIndices with a Go map, the plain way: every
// non-null row's value numbered in the order values first come.
func mapIndices(v stringRows) (dict []string, idx []int32, nulls int) {
	ids := map[string]int32{}
	for i := range v.len() {
		e := v.ref(i)
		if v.c.null[e] {
			idx = append(idx, 0)
			nulls++
			continue
		}
		val := string(v.value(e))
		id, ok := ids[val]
		if !ok {
			id = int32(len(dict))
			ids[val] = id
			dict = append(dict, val)
		}
		idx = append(idx, id)
	}
	return dict, idx, nulls
}

// TestDictionaryIndicesMatchesMap holds the row group dictionary to the
// map's numbering: runs of one value, shared rows (refs), nulls, the empty
// string, values that are prefixes of one another, and enough distinct
// values to grow the table several times, with one strDict reused from
// row group to row group as the writer reuses it.
func TestDictionaryIndicesMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var d strDict
	var idx []int32
	for n, distinct := range []int{1, 2, 7, 300, 5000, 40000, 3, 100000} {
		var c StringColumn
		rows := r.IntN(3*distinct) + 1
		for range rows {
			switch k := r.IntN(distinct); {
			case r.IntN(40) == 0:
				c.AppendNullable(nil, false)
			case k%17 == 0:
				c.Append(nil)
			default:
				c.Append(fmt.Appendf(nil, "%0*d", 1+k%5, k))
			}
			// Runs, as server ids and tool names come.
			for range r.IntN(3) {
				c.appendRows(&c, c.Len()-1, c.Len())
			}
		}
		v := stringRows{c: &c}
		if n%2 == 1 {
			refs := make([]int32, 2*c.Len())
			for i := range refs {
				refs[i] = int32(i / 2)
			}
			v.refs = refs
		}
		nulls := dictionaryIndices(v, &d, &idx)
		wantDict, wantIdx, wantNulls := mapIndices(v)
		var gotDict []string
		for id := range d.len() {
			gotDict = append(gotDict, string(d.dict[d.ends[id]:d.ends[id+1]]))
		}
		if nulls != wantNulls || !slices.Equal(gotDict, wantDict) || !slices.Equal(idx, wantIdx) {
			t.Fatalf("case %d (%d rows): %d nulls, %d values; the map: %d nulls, %d values; indices equal %v",
				n, v.len(), nulls, len(gotDict), wantNulls, len(wantDict), slices.Equal(idx, wantIdx))
		}
	}
}
