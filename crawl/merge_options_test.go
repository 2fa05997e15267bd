package crawl

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestRecordOptionsDiffer: shards crawled with the same flags merge
// whatever each held (a shard with no package candidates writes no
// sandbox_memory); a differing option is named as its flag, in words.
func TestRecordOptionsDiffer(t *testing.T) {
	base := release.Options{Timeout: "10s", MaxTools: 100, MaxBytes: 1 << 20, MaxPages: 5, SandboxMemory: 4 << 30, PackageConcurrency: 2}
	noPackages := base
	noPackages.SandboxMemory, noPackages.PackageConcurrency = 0, 0
	smaller := base
	smaller.SandboxMemory = 1 << 30
	for _, tc := range []struct {
		name string
		a, b release.Options
		want string // "" : no difference
	}{
		{"one shard held no packages", base, noPackages, ""},
		{"the other held none", noPackages, base, ""},
		{"scheduling only", base, release.Options{Timeout: "10s", MaxTools: 100, MaxBytes: 1 << 20, MaxPages: 5, SandboxMemory: 4 << 30, Concurrency: 9, PerHost: 3, MaxMemory: 1, PackageConcurrency: 7, Shard: "1/2"}, ""},
		{"sandbox memory", base, smaller, "shard 2 was crawled with --sandbox-memory 1GiB (1073741824 bytes), shard 1 with 4GiB (4294967296 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := recordOptionsDiffer(&release.Release{Options: tc.a}, &release.Release{Options: tc.b}, "shard 1", "shard 2")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.ContainsAny(got, "{}`") || strings.Contains(got, "omitempty") {
				t.Errorf("the message shows Go or JSON: %q", got)
			}
		})
	}
}

// TestRecordOptionsDifferCoversEveryOption: every option release.json
// records is either scheduling (recordOptions clears it) or named when it
// differs, so that a new option cannot slip past the merge unnoticed.
func TestRecordOptionsDifferCoversEveryOption(t *testing.T) {
	base := release.Options{SandboxMemory: 1 << 30}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		b := base
		f := reflect.ValueOf(&b).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 3)
		default:
			t.Fatalf("option %s of kind %v: teach this test and recordOptionsDiffer", typ.Field(i).Name, f.Kind())
		}
		scheduling := recordOptions(b) == recordOptions(base)
		named := recordOptionsDiffer(&release.Release{Options: base}, &release.Release{Options: b}, "a", "b") != ""
		if !scheduling && !named {
			t.Errorf("option %s changes a record but a difference in it is not named", typ.Field(i).Name)
		}
	}
}
