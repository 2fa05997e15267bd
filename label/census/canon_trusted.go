package census

import (
	"encoding/binary"
	"math/bits"
)

// The canonical form of a decoded tool.
//
// Most decoded tools carry the tape their decoder recorded as it parsed
// them (decode_tape.go), and AppendCanonicalDecoded writes their canonical
// form from it. For the others (see there), a Decoder has still validated
// every byte of the tool's text (Tool.Raw) before it handed the tool out,
// so the canonicaliser need not check it again: AppendCanonicalDecoded
// reads it with the tape of canon_tape.go in trusted mode, where a string ends at the first unescaped quote (no look at
// control characters or UTF-8) and a literal is known by its first byte.
// The tape still follows the brackets, commas and colons, and the general
// path still takes a text the tape does not (past tapeLimit): the output
// is AppendCanonicalTool's, byte for byte (TestDecodedCanonical,
// FuzzDecodedCanonical).

// AppendCanonicalDecoded is AppendCanonicalTool for a tool a Decoder gave
// (its Raw unchanged since), whose text is known to be valid: it appends
// the canonical form of t.Raw to dst and gives where in the result the
// canonical value of the input schema lies, as AppendCanonicalTool does.
// It writes from the decoder's tape of t while the decoder is on t's line
// (tools of one line may be written on several goroutines at once), and
// from t.Raw otherwise. It fails only for a Tool no Decoder gave, whose
// Raw is not valid JSON; such text may then also give wrong output or a
// panic.
func AppendCanonicalDecoded(dst []byte, t *Tool) (out []byte, a, b int, err error) {
	c := canonPool.Get().(*canonicalizer)
	if out, a, b, ok := c.taped(dst, t); ok {
		c.release()
		t.tape.d.tapeUse.used.Add(1)
		return out, a, b, nil
	}
	c.trusted = true
	out, a, b, err = c.tool(dst, t.Raw)
	c.trusted = false
	c.release()
	return out, a, b, err
}

// trustedString is tapeString for validated text: it finds the closing
// quote eight bytes at a time, looking only for quotes and backslashes,
// and steps over each escape whole (the four hex digits of a \u escape
// hold neither). It reports false only when the text ends first.
func trustedString(data []byte, q int) (int, bool, bool) {
	n := len(data)
	p := q + 1
	esc := false
	for {
		if p+8 <= n {
			m := quoteMask(binary.LittleEndian.Uint64(data[p:]))
			if m == 0 {
				p += 8
				continue
			}
			p += bits.TrailingZeros64(m) >> 3
		} else {
			for p < n && data[p] != '"' && data[p] != '\\' {
				p++
			}
			if p >= n {
				return n, esc, false
			}
		}
		if data[p] == '"' {
			return p + 1, esc, true
		}
		esc = true
		p += 2
	}
}

// quoteMask flags, in the high bit of each byte, the quotes and
// backslashes of x; as in specialMask only the lowest flag is exact.
func quoteMask(x uint64) uint64 {
	const lo = 0x0101010101010101
	const hi = 0x8080808080808080
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return (((q - lo) &^ q) | ((b - lo) &^ b)) & hi
}
