package archtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image target: [text](target)
// or [text](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// inlineCode matches a code span, whose text is not a link.
var inlineCode = regexp.MustCompile("`+[^`]*`+")

// docFiles lists the Markdown a reader follows: README.md,
// ARCHITECTURE.md, BENCH.md and every page of docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "ARCHITECTURE.md", "BENCH.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ holds no page: the check reads the wrong folder")
	}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// mdDoc is one Markdown file: its anchors and its links, each with its line.
type mdDoc struct {
	anchors map[string]bool
	links   []mdLinkAt
}

type mdLinkAt struct {
	line   int
	target string
}

// parseMarkdown reads the headings (as GitHub names their anchors) and
// the links of a Markdown file, skipping fenced code and code spans.
func parseMarkdown(path string) (mdDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return mdDoc{}, err
	}
	defer f.Close()
	d := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			a := slug(h)
			if k := seen[a]; k > 0 {
				d.anchors[fmt.Sprintf("%s-%d", a, k)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			d.links = append(d.links, mdLinkAt{n, m[1]})
		}
	}
	return d, sc.Err()
}

// slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, '-' and '_' kept, spaces to '-', all else dropped.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestDocLinks: every relative link and #anchor in README.md,
// ARCHITECTURE.md, BENCH.md and docs/*.md leads somewhere.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := map[string]mdDoc{}
	get := func(rel string) (mdDoc, error) {
		if d, ok := docs[rel]; ok {
			return d, nil
		}
		d, err := parseMarkdown(filepath.Join(root, filepath.FromSlash(rel)))
		if err == nil {
			docs[rel] = d
		}
		return d, err
	}
	checked := 0
	for _, file := range docFiles(t, root) {
		d, err := get(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range d.links {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			rel := file
			if path != "" {
				rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
				if strings.HasPrefix(rel, "../") {
					t.Errorf("%s:%d: %s leaves the repository", file, l.line, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s:%d: %s: no such file %s", file, l.line, target, rel)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(rel, ".md") {
				t.Errorf("%s:%d: %s: an anchor into a file that is not Markdown", file, l.line, target)
				continue
			}
			to, err := get(rel)
			if err != nil {
				t.Errorf("%s:%d: %s: %v", file, l.line, target, err)
				continue
			}
			if !to.anchors[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", file, l.line, target, rel, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the check reads nothing")
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Put the labels where the tools are listed: `proxy`", "put-the-labels-where-the-tools-are-listed-proxy"},
		{"Crawling on many machines: `--shard K/N` and `merge`", "crawling-on-many-machines---shard-kn-and-merge"},
		{"PyPI, OCI and MCPB packages", "pypi-oci-and-mcpb-packages"},
		{"What a run guarantees", "what-a-run-guarantees"},
	} {
		if got := slug(c.in); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
