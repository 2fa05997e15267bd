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
	// forged counts the tools whose _meta was replaced rather than added
	// to: it held the key already, was not an object, or came twice.
	forged int
}

// eachTool calls fn with each element of the result's tools array (the
// last "tools" member, the one readers keep); a result without one calls
// fn for nothing.
func eachTool(result []byte, fn func(tool []byte)) error {
	i := skipWS(result, 0)
	if i >= len(result) || result[i] != '{' {
		return nil
	}
	ts, _, _, err := lastMember(result, i, "tools")
	if err != nil || ts < 0 || result[ts] != '[' {
		return err
	}
	_, err = elements(result, ts, func(s, e int) error {
		fn(result[s:e])
		return nil
	})
	return err
}

// rewriteList appends to dst the tools/list result with each tool's labels
// spliced into its _meta, and the tools keep refuses dropped. label returns
// nil for a tool it cannot label (not an object, or a schema the census
// decoder rejects): such a tool passes unchanged when keep (which sees it
// with a nil entry) keeps it. A result without a "tools" array is appended
// unchanged.
func rewriteList(dst, result []byte, label func(tool []byte) *labelEntry, keep func(tool []byte, ent *labelEntry) bool) ([]byte, listStats, error) {
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
		}
		if !keep(tool, ent) {
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
		var forged bool
		dst, forged = spliceMeta(dst, tool, ent.meta)
		if forged {
			st.forged++
		}
		return nil
	})
	if err != nil {
		return append(dst[:base], result...), listStats{}, err
	}
	return append(dst, result[closing:]...), st, nil
}

// spliceMeta appends tool with "MetaKey": meta added as the last member of
// its _meta object, or with a _meta member holding only it appended when
// the tool has no _meta. Every other byte of the tool is copied as it came,
// unless the tool tried to speak for the proxy: a _meta that already holds
// the key (a forged label, or a proxy's in front of this one), is not an
// object, or comes twice. Then the tool leaves with exactly one _meta
// member, an object (the last one's members, the key's dropped) holding
// exactly one MetaKey, ours; forged says so. Readers that keep the first
// of duplicate members must not see anything but our label.
func spliceMeta(dst, tool, meta []byte) (out []byte, forged bool) {
	var metas []member
	closing, err := members(tool, 0, func(m member) {
		if keyIs(m.key, "_meta") {
			metas = append(metas, m)
		}
	})
	if err != nil {
		return append(dst, tool...), false
	}
	if len(metas) == 0 {
		dst = append(dst, tool[:closing]...)
		if skipWS(tool, 1) != closing {
			dst = append(dst, ',')
		}
		dst = appendOwnMeta(dst, nil, meta)
		return append(dst, tool[closing:]...), false
	}
	last := metas[len(metas)-1]
	var kept []member // the last _meta's members but the key
	ours := 0
	if tool[last.start] == '{' {
		members(tool, last.start, func(m member) {
			if keyIs(m.key, MetaKey) {
				ours++
			} else {
				kept = append(kept, m)
			}
		})
	}
	if len(metas) == 1 && tool[last.start] == '{' && ours == 0 {
		brace := last.end - 1
		dst = append(dst, tool[:brace]...)
		if skipWS(tool, last.start+1) != brace {
			dst = append(dst, ',')
		}
		dst = append(dst, metaKeyJSON...)
		dst = append(dst, meta...)
		return append(dst, tool[brace:]...), false
	}
	// Rebuild: the tool's members in order, one _meta (at the last's
	// place) made of the kept members and ours.
	dst = append(dst, '{')
	n := 0
	members(tool, 0, func(m member) {
		isMeta := keyIs(m.key, "_meta")
		if isMeta && m.start != last.start {
			return
		}
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		if !isMeta {
			dst = append(dst, tool[m.kstart:m.end]...)
			return
		}
		dst = appendOwnMeta(dst, func(d []byte) []byte {
			for _, k := range kept {
				d = append(d, tool[k.kstart:k.end]...)
				d = append(d, ',')
			}
			return d
		}, meta)
	})
	return append(dst, '}'), true
}

// appendOwnMeta appends a _meta member: the members before wrote, then
// ours.
func appendOwnMeta(dst []byte, before func([]byte) []byte, meta []byte) []byte {
	dst = append(dst, `"_meta":{`...)
	if before != nil {
		dst = before(dst)
	}
	dst = append(dst, metaKeyJSON...)
	dst = append(dst, meta...)
	return append(dst, '}')
}
