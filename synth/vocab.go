package synth

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// The word stock is distilled from real tools/list answers once, at
// development time, so that the generator needs no corpus where it runs.
//
//go:generate sh -c "python3 gen_vocab.py ../realcorpus/testdata/real-mcp-tools/tools.jsonl.gz > vocab.txt"
//go:embed vocab.txt
var vocabText string

type propEntry struct {
	typ, name, desc string
	set             classify.Set
}

type toolEntry struct{ name, desc string }

// labelBits lists the labels in the order the generator considers them; the
// index is the pool number.
var labelBits = [...]classify.Set{
	classify.URLEndpoint, classify.CommandString, classify.MoneyAmount,
	classify.CredentialValue, classify.FilesystemPath,
	classify.RawContentBlob, classify.AccountIdentity,
}

type vocabulary struct {
	servers []string
	tools   []toolEntry
	props   []propEntry
	// pools[i] holds the properties whose only class is labelBits[i] (for
	// a bucket: that carry the bucket and no class), mixed those with two
	// classes or more, and neutral those with no label at all. Keeping the
	// pools apart lets each pick probability steer one frequency.
	pools   [len(labelBits)][]int32
	mixed   []int32
	neutral []int32
	// forms are the bounded word forms of every rule, the raw material of
	// the Unicode and script-adjacency corners.
	forms []string
}

var vocab = sync.OnceValue(parseVocab)

func unescapeField(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func parseVocab() *vocabulary {
	v := &vocabulary{}
	section := ""
	for line := range strings.SplitSeq(vocabText, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '%' {
			section = line[1:]
			continue
		}
		f := strings.Split(line, "\t")
		switch {
		case section == "server" && len(f) == 1:
			v.servers = append(v.servers, f[0])
		case section == "tool" && len(f) == 2:
			v.tools = append(v.tools, toolEntry{unescapeField(f[0]), unescapeField(f[1])})
		case section == "prop" && len(f) == 3:
			e := propEntry{typ: f[0], name: unescapeField(f[1]), desc: unescapeField(f[2])}
			e.set = classify.Property(e.name, e.desc)
			v.props = append(v.props, e)
		default:
			panic("synth: malformed vocab.txt line: " + line)
		}
	}
	for i, e := range v.props {
		cls := e.set & classify.Classes
		switch {
		case e.set == 0:
			v.neutral = append(v.neutral, int32(i))
		case cls&(cls-1) != 0:
			v.mixed = append(v.mixed, int32(i))
		}
		for j, bit := range labelBits {
			if cls == bit || cls == 0 && e.set&bit != 0 {
				v.pools[j] = append(v.pools[j], int32(i))
			}
		}
	}
	for _, r := range classify.Rules() {
		v.forms = append(v.forms, r.Forms...)
	}
	if len(v.servers) == 0 || len(v.tools) == 0 || len(v.neutral) == 0 {
		panic("synth: vocab.txt lacks a section")
	}
	for i, p := range v.pools {
		if len(p) == 0 {
			panic("synth: vocab.txt has no property for pool " + labelBits[i].ID())
		}
	}
	return v
}
