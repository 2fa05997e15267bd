package report

import (
	"fmt"
	"time"
)

// DateLayout is how a release date is written: YYYY-MM-DD.
const DateLayout = time.DateOnly

// CheckReleaseID reports whether id can name a release: 1 to 64 ASCII
// letters, digits, '.', '_' and '-', not starting with '.' or '-'. A
// release id is a folder's name in a history dataset (release=ID), so it
// holds nothing a path or a hive partition value would read otherwise.
func CheckReleaseID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("release id %q: must be 1 to 64 characters", id)
	}
	if id[0] == '.' || id[0] == '-' {
		return fmt.Errorf("release id %q: must not start with %q", id, id[0])
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("release id %q: %q at byte %d is not a letter, digit, '.', '_' or '-'", id, c, i)
		}
	}
	return nil
}

// CheckReleaseDate reports whether d is a date as DateLayout writes it.
func CheckReleaseDate(d string) error {
	t, err := time.Parse(DateLayout, d)
	if err != nil || t.Format(DateLayout) != d {
		return fmt.Errorf("release date %q: not a date YYYY-MM-DD", d)
	}
	return nil
}
