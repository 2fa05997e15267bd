package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Policy is what the proxy does with the labels besides publishing them.
// The zero Policy does nothing: the specification says the labels MUST NOT
// be the sole authorization decision, so acting on them is opt-in.
type Policy struct {
	// Hide drops the tools carrying any of these classes from every
	// tools/list result, and refuses calls to them. Each listed tool is
	// judged by its own classes, so that what a client is shown does not
	// depend on the order of the tools or of the pages; a call names a
	// tool only by name, so it is refused when any tool listed under that
	// name is hidden: a second tool sharing a hidden tool's name stays
	// listed, but calling the name is refused.
	Hide []string
	// Deny keeps the tools carrying any of these classes listed, and answers
	// their tools/call with a JSON-RPC error naming the class.
	Deny []string
	// AllowTools are tool names exempt from Hide and Deny.
	AllowTools []string
}

// ClassIDs are the class identifiers Hide and Deny accept.
func ClassIDs() []string { return classify.Classes.IDs(classify.Classes) }

// NormaliseClass returns the class id for s: the id itself
// ("gg:command-string") or the id without its prefix ("command-string").
func NormaliseClass(s string) (string, error) {
	id := s
	if !strings.HasPrefix(id, "gg:") {
		id = "gg:" + id
	}
	if !slices.Contains(ClassIDs(), id) {
		return "", fmt.Errorf("unknown class %q: want one of %s", s, strings.Join(ClassIDs(), ", "))
	}
	return id, nil
}

func (p Policy) active() bool { return len(p.Hide)+len(p.Deny) > 0 }

func (p Policy) allowed(name string) bool { return slices.Contains(p.AllowTools, name) }

// hiddenBy returns the first class of the tool name that Hide names, or
// "".
func (p Policy) hiddenBy(name string, st *toolState) string {
	if p.allowed(name) || st == nil {
		return ""
	}
	return firstShared(st.classes, p.Hide)
}

// deniedBy returns the first class of the tool name that Deny names, or "".
func (p Policy) deniedBy(name string, st *toolState) string {
	if p.allowed(name) || st == nil {
		return ""
	}
	return firstShared(st.classes, p.Deny)
}

func firstShared(classes, set []string) string {
	for _, c := range classes {
		if slices.Contains(set, c) {
			return c
		}
	}
	return ""
}
