package proxy

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// labelEntry is what the proxy keeps of one labelled tool definition.
type labelEntry struct {
	// name is the tool's name ("" when it has none).
	name string
	// classes are the tool's gg: classes, for the policy.
	classes []string
	// meta is the JSON object spliced into the tool's _meta.
	meta []byte
}

// toolKey identifies a tool definition: the SHA-256 of its RFC 8785
// canonical form (census.AppendCanonical), the definition hash the
// tool-level diff uses too. Whitespace and key order do not change it; any
// change to what the tool says gives it a new key and so new labels.
type toolKey [32]byte

var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// keyOf returns the tool's definition hash. A tool that does not parse has
// no canonical form; its raw bytes are hashed instead (the labeller will
// reject it anyway).
func keyOf(tool []byte) toolKey {
	bp := canonBufs.Get().(*[]byte)
	defer canonBufs.Put(bp)
	c, err := census.AppendCanonical((*bp)[:0], tool)
	if err != nil {
		return sha256.Sum256(tool)
	}
	*bp = c
	return sha256.Sum256(c)
}

// labeller labels tool definitions with the labeller of the classify
// command, so that a proxy's labels are the ones classify prints, and
// keeps the results in a bounded LRU cache: a repeated tools/list costs a
// hash per tool, not a classification.
type labeller struct {
	pool sync.Pool // *label.Labeller: each holds a decoder's arenas

	mu    sync.Mutex
	max   int
	order *list.List // of *cacheItem, most recent first
	items map[toolKey]*list.Element
}

type cacheItem struct {
	key toolKey
	ent *labelEntry
}

func newLabeller(maxEntries int) *labeller {
	// Two keys per definition (see label).
	l := &labeller{max: 2 * max(maxEntries, 1), order: list.New(), items: make(map[toolKey]*list.Element)}
	l.pool.New = func() any { return label.NewLabeller() }
	return l
}

// label returns the labels of tool, from the cache when its definition was
// seen before; hit says which. It returns an error for a tool the census
// decoder rejects.
//
// The cache is keyed by the definition hash, and also by the hash of the
// bytes as sent: a server lists the same bytes again and again, and that
// key costs one SHA-256, where the definition hash costs a canonical
// encoding too. Both keys lead to the same entry.
func (l *labeller) label(tool []byte) (ent *labelEntry, hit bool, err error) {
	raw := toolKey(sha256.Sum256(tool))
	if ent := l.get(raw); ent != nil {
		return ent, true, nil
	}
	def := keyOf(tool)
	if ent := l.get(def); ent != nil {
		l.put(raw, ent)
		return ent, true, nil
	}
	ent, err = l.classify(tool)
	if err != nil {
		return nil, false, err
	}
	l.put(def, ent)
	l.put(raw, ent)
	return ent, false, nil
}

func (l *labeller) get(k toolKey) *labelEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[k]
	if !ok {
		return nil
	}
	l.order.MoveToFront(el)
	return el.Value.(*cacheItem).ent
}

func (l *labeller) put(k toolKey, ent *labelEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[k]; ok { // labelled meanwhile by another session
		l.order.MoveToFront(el)
		return
	}
	l.items[k] = l.order.PushFront(&cacheItem{key: k, ent: ent})
	for l.order.Len() > l.max {
		last := l.order.Back()
		l.order.Remove(last)
		delete(l.items, last.Value.(*cacheItem).key)
	}
}

var errNotOneTool = errors.New("the tool did not decode as exactly one tool")

// classify labels one tool. The tool is read as the one-tool tools/list
// result {"tools": [tool]}, the shape classify reads a server's list in,
// so that a member of the tool never changes how the record is read.
func (l *labeller) classify(tool []byte) (*labelEntry, error) {
	doc := make([]byte, 0, len(tool)+12)
	doc = append(doc, `{"tools":[`...)
	doc = append(doc, tool...)
	doc = append(doc, "]}"...)
	rl := l.pool.Get().(*label.Labeller)
	defer l.pool.Put(rl)
	var ent *labelEntry
	err := rl.Record(doc, func(t *label.ToolLabels) error {
		if ent != nil {
			return errNotOneTool
		}
		ent = entryOf(t)
		return nil
	})
	if err == nil && ent == nil {
		err = errNotOneTool
	}
	if err != nil {
		return nil, err
	}
	return ent, nil
}

// entryOf renders the _meta object of one tool's labels: the classes,
// required classes and per-property classes classify prints (the
// non-normative buckets are left out: they are not risk classes), and the
// rules they follow.
func entryOf(t *label.ToolLabels) *labelEntry {
	ent := &labelEntry{classes: t.Classes}
	if t.Tool != nil {
		ent.name = *t.Tool
	}
	b := make([]byte, 0, 96+64*len(t.Properties))
	b = append(b, `{"classes":`...)
	b = appendStrings(b, t.Classes)
	b = append(b, `,"required_classes":`...)
	b = appendStrings(b, t.RequiredClasses)
	b = append(b, `,"properties":[`...)
	for i := range t.Properties {
		p := &t.Properties[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = census.AppendJSONString(b, p.Name)
		b = append(b, `,"where":`...)
		b = census.AppendJSONString(b, p.Where)
		if p.Required {
			b = append(b, `,"required":true`...)
		} else {
			b = append(b, `,"required":false`...)
		}
		b = append(b, `,"classes":`...)
		b = appendStrings(b, p.Classes)
		b = append(b, '}')
	}
	b = append(b, `],"rules":"`+Rules+`"}`...)
	ent.meta = b
	return ent
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = census.AppendJSONString(b, s)
	}
	return append(b, ']')
}
