package proxy

// MetaKey is the _meta member the proxy adds to every listed tool. The
// reverse-DNS prefix is the MCP convention for vendor keys in _meta.
const MetaKey = "io.github.atlas-reproduce/param-risk"

// Rules names the decision rules the labels follow: the draft that defines
// the gg: classes.
const Rules = "draft-correctover-gg-mcp-parameter-risk-01"

var metaKeyJSON = []byte(`"` + MetaKey + `":`)

// listStats counts what one tools/list rewrite did.
type listStats struct {
	labelled, unlabelled, hidden int
}

// rewriteList appends to dst the tools/list result with each tool's labels
// spliced into its _meta, and the tools keep refuses dropped. label returns
// nil for a tool it cannot label (not an object, or a schema the census
// decoder rejects): such a tool passes unchanged and is always kept. A
// result without a "tools" array is appended unchanged.
func rewriteList(dst, result []byte, label func(tool []byte) *labelEntry, keep func(*labelEntry) bool) ([]byte, listStats, error) {
	var st listStats
	i := skipWS(result, 0)
	if i >= len(result) || result[i] != '{' {
		return append(dst, result...), st, nil // not a list result
	}
	ts, _, _, err := lastMember(result, i, "tools")
	if err != nil {
		return append(dst, result...), st, err
	}
	if ts < 0 || result[ts] != '[' {
		return append(dst, result...), st, nil
	}
	base := len(dst)
	dst = append(dst, result[:ts+1]...)
	n := 0
	closing, err := elements(result, ts, func(s, e int) error {
		tool := result[s:e]
		ent := label(tool)
		if ent == nil {
			st.unlabelled++
		} else if !keep(ent) {
			st.hidden++
			return nil
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if ent == nil {
			dst = append(dst, tool...)
			return nil
		}
		st.labelled++
		dst = spliceMeta(dst, tool, ent.meta)
		return nil
	})
	if err != nil {
		return append(dst[:base], result...), listStats{}, err
	}
	return append(dst, result[closing:]...), st, nil
}

// spliceMeta appends tool with "MetaKey": meta added as the last member of
// its _meta object (the last _meta member, the one readers keep), or with a
// _meta member holding only it appended when the tool has no _meta object.
// Every other byte of the tool is copied as it came.
func spliceMeta(dst, tool, meta []byte) []byte {
	ms, me, closing, err := lastMember(tool, 0, "_meta")
	if err != nil {
		return append(dst, tool...)
	}
	if ms >= 0 && tool[ms] == '{' {
		brace := me - 1
		dst = append(dst, tool[:brace]...)
		if skipWS(tool, ms+1) != brace {
			dst = append(dst, ',')
		}
		dst = append(dst, metaKeyJSON...)
		dst = append(dst, meta...)
		return append(dst, tool[brace:]...)
	}
	dst = append(dst, tool[:closing]...)
	if skipWS(tool, 1) != closing {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{`...)
	dst = append(dst, metaKeyJSON...)
	dst = append(dst, meta...)
	dst = append(dst, '}')
	return append(dst, tool[closing:]...)
}
