package proxy

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
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

// toolKey identifies a tool definition: its definition hash, the SHA-256
// of its RFC 8785 canonical form as toolid.Hasher computes it for the
// tool-level diff and the lock. Whitespace and key order do not change it;
// any change to what the tool says gives it a new key and so new labels.
type toolKey [32]byte

var hashers = sync.Pool{New: func() any { return new(toolid.Hasher) }}

// keyOf returns the tool's definition hash. A tool that does not parse has
// no canonical form; its raw bytes are hashed instead (the labeller will
// reject it anyway).
func keyOf(tool []byte) toolKey {
	h := hashers.Get().(*toolid.Hasher)
	defer hashers.Put(h)
	k, err := h.Definition(tool)
	if err != nil {
		return sha256.Sum256(tool)
	}
	return k
}

// labeller labels tool definitions with the labeller of the classify
// command, so that a proxy's labels are the ones classify prints, and
// keeps the results in a bounded LRU cache: a repeated tools/list costs a
// hash per tool, not a classification.
type labeller struct {
	pool sync.Pool // *label.Labeller: each holds a decoder's arenas
	// turns bounds the bytes of tools being classified at once: a tool of
	// empty properties costs the decoder and its labels some thirty times
	// its size.
	turns *semaphore.Weighted

	mu       sync.Mutex
	max      int
	maxBytes int64
	bytes    int64      // of the entries' labels, counted per key
	order    *list.List // of *cacheItem, most recent first
	items    map[toolKey]*list.Element
}

// Bounds of the labeller's memory.
const (
	// maxToolBytes is the largest tool definition labelled (and the
	// bytes classified at once): larger ones pass unlabelled, as a tool
	// the decoder rejects does. The largest real tools are a few hundred
	// kilobytes.
	maxToolBytes = 4 << 20
	// maxCacheBytes bounds the labels the cache keeps.
	maxCacheBytes = 64 << 20
)

// errTooLarge refuses a tool of more than maxToolBytes.
var errTooLarge = errors.New("tool definition too large to label")

type cacheItem struct {
	key toolKey
	ent *labelEntry
}

func newLabeller(maxEntries int) *labeller {
	// Two keys per definition (see label).
	l := &labeller{max: 2 * max(maxEntries, 1), maxBytes: maxCacheBytes, order: list.New(), items: make(map[toolKey]*list.Element),
		turns: semaphore.NewWeighted(maxToolBytes)}
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
	if len(tool) > maxToolBytes {
		return nil, false, errTooLarge
	}
	raw := toolKey(sha256.Sum256(tool))
	if ent := l.get(raw); ent != nil {
		return ent, true, nil
	}
	def := keyOf(tool)
	if ent := l.get(def); ent != nil {
		l.put(raw, ent)
		return ent, true, nil
	}
	l.turns.Acquire(context.Background(), int64(max(len(tool), 1)))
	ent, err = l.classify(tool)
	l.turns.Release(int64(max(len(tool), 1)))
	if err != nil {
		return nil, false, err
	}
	l.put(def, ent)
	l.put(raw, ent)
	return ent, false, nil
}

// labelPrivate labels tool without the cache, neither reading nor
// filling it: the tools of a result the server marks cacheScope "private"
// are one client's, and their labels must not be shared with others (a
// cache hit would tell another session that such a tool exists).
func (l *labeller) labelPrivate(tool []byte) (*labelEntry, error) {
	if len(tool) > maxToolBytes {
		return nil, errTooLarge
	}
	l.turns.Acquire(context.Background(), int64(max(len(tool), 1)))
	defer l.turns.Release(int64(max(len(tool), 1)))
	return l.classify(tool)
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
	size := ent.size()
	if size > l.maxBytes/16 {
		return // one entry must not push out a sixteenth of the cache
	}
	l.items[k] = l.order.PushFront(&cacheItem{key: k, ent: ent})
	l.bytes += size
	for l.order.Len() > l.max || l.bytes > l.maxBytes {
		last := l.order.Back()
		l.order.Remove(last)
		it := last.Value.(*cacheItem)
		delete(l.items, it.key)
		l.bytes -= it.ent.size()
	}
}

// size is about what an entry holds, in bytes.
func (e *labelEntry) size() int64 {
	n := int64(len(e.meta) + len(e.name) + 128)
	for _, c := range e.classes {
		n += int64(len(c)) + 16
	}
	return n
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
	// label owns the encoding, so _meta and classify agree on every
	// string's escaping.
	ent.meta = t.AppendMeta(make([]byte, 0, 96+64*len(t.Properties)), Rules)
	return ent
}
