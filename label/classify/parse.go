package classify

import (
	"fmt"
	"slices"
	"strings"
)

// ParseClasses reads a comma-separated list of normative classes as a
// user types them on a command line: each as its id (gg:command-string),
// without the gg: prefix (command-string), or with underscores for the
// hyphens (command_string, the spelling of the Parquet columns); case and
// blanks around the names do not matter, empty items are skipped. It
// returns the ids in the order given, each once. An unknown name is an
// error listing the valid ones.
func ParseClasses(list string) ([]string, error) {
	var ids []string
	for _, item := range strings.Split(list, ",") {
		name := strings.TrimSpace(item)
		if name == "" {
			continue
		}
		id, ok := classID(name)
		if !ok {
			return nil, fmt.Errorf("unknown class %q: want one of %s (the gg: prefix may be left out, and _ written for -)",
				name, strings.Join(Classes.IDs(Classes), ", "))
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// classID is the normative class id a name spells, if any.
func classID(name string) (string, bool) {
	id := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if !strings.HasPrefix(id, "gg:") {
		id = "gg:" + id
	}
	for i := range rules {
		if r := &rules[i]; r.Normative && r.ID == id {
			return id, true
		}
	}
	return "", false
}
