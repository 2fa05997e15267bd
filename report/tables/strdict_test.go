package tables

import (
	"bytes"
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

// mapDictionary is the map-keyed dictionary writeStrings used before
// strDict, for BenchmarkDictionaryIndices to compare with.
func mapDictionary(v stringRows, ids map[string]int32, dict *[]byte, ends, idx *[]int32) {
	clear(ids)
	*dict, *ends, *idx = (*dict)[:0], append((*ends)[:0], 0), (*idx)[:0]
	var prev []byte
	id, prevEntry := int32(-1), -1
	for i := range v.len() {
		e := v.ref(i)
		if v.c.null[e] {
			*idx = append(*idx, 0)
			continue
		}
		if e != prevEntry {
			val := v.value(e)
			if id < 0 || !bytes.Equal(val, prev) {
				var seen bool
				if id, seen = ids[string(val)]; !seen {
					id = int32(len(*ends) - 1)
					ids[string(val)] = id
					*dict = append(*dict, val...)
					*ends = append(*ends, int32(len(*dict)))
				}
				prev = val
			}
			prevEntry = e
		}
		*idx = append(*idx, id)
	}
}

// BenchmarkDictionaryIndices numbers a 32k-row group of property names
// (every row a new value, as the property column has them) drawn from
// 300 and from 20,000 distinct names, with strDict and with a Go map.
func BenchmarkDictionaryIndices(b *testing.B) {
	for _, distinct := range []int{300, 20000} {
		r := rand.New(rand.NewPCG(1, uint64(distinct)))
		var c StringColumn
		for range batchRows {
			c.Append(fmt.Appendf(nil, "prop_%d", r.IntN(distinct)))
		}
		v := stringRows{c: &c}
		b.Run(fmt.Sprintf("strDict/%d", distinct), func(b *testing.B) {
			var d strDict
			var idx []int32
			for b.Loop() {
				dictionaryIndices(v, &d, &idx)
			}
		})
		b.Run(fmt.Sprintf("map/%d", distinct), func(b *testing.B) {
			ids := map[string]int32{}
			var dict []byte
			var ends, idx []int32
			for b.Loop() {
				mapDictionary(v, ids, &dict, &ends, &idx)
			}
		})
	}
}

// FuzzDictionaryIndices holds the dictionary to the map's numbering on any
// values: data split at each 0xff byte, a value starting with 0xfe a null.
func FuzzDictionaryIndices(f *testing.F) {
	f.Add([]byte("a\xffb\xffa\xff\xfe\xff\xffabcdefgh\xffabcdefgh"))
	f.Add([]byte("0123456789abcdef\xff0123456789abcdeg\xff0123456789abcdef0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c StringColumn
		for _, v := range bytes.Split(data, []byte{0xff}) {
			if len(v) > 0 && v[0] == 0xfe {
				c.AppendNullable(nil, false)
				continue
			}
			c.Append(v)
		}
		v := stringRows{c: &c}
		var d strDict
		var idx []int32
		nulls := dictionaryIndices(v, &d, &idx)
		wantDict, wantIdx, wantNulls := mapIndices(v)
		if nulls != wantNulls || d.len() != len(wantDict) || !slices.Equal(idx, wantIdx) {
			t.Fatalf("%q: %d nulls, %d values, indices %v; the map: %d, %d, %v", data, nulls, d.len(), idx, wantNulls, len(wantDict), wantIdx)
		}
		for id, want := range wantDict {
			if got := string(d.dict[d.ends[id]:d.ends[id+1]]); got != want {
				t.Fatalf("%q: value %d is %q, want %q", data, id, got, want)
			}
		}
	})
}
