package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

func TestSurfaceExamples(t *testing.T) {
	const (
		hc   = HighConsequence
		out  = OutboundNetwork
		read = ReadRetrieval
	)
	tests := []struct {
		name, desc string
		want       SurfaceSet
	}{
		// payment or money
		{"create_payment", "", hc},
		{"x", "Refund a charge", hc},
		{"buyTicket", "", hc},
		{"paypal_status", "", 0}, // "paypal" is one word, not "pay"
		{"get_prices", "", read},
		// filesystem write or delete: a verb and an object, or a command
		{"write_file", "", hc},
		{"deleteFile", "", hc},
		{"x", "Removes a directory and everything in it", hc},
		{"mkdir", "", hc},
		{"delete_issue", "", 0},
		{"read_file", "", read},
		// descriptions are not split: "delete_file" stays one word
		{"x", "alias of delete_file", 0},
		// command or code execution
		{"run_command", "", hc},
		{"executeScript", "", hc},
		{"shell", "", hc},
		{"x", "Evaluate the expression with eval", hc},
		{"run_tests", "", 0},
		{"execute_query", "", read},
		// infrastructure deployment
		{"deploy_app", "", hc},
		{"terraform_apply", "", hc},
		{"stop_instance", "", hc},
		{"list_instances", "", read},
		{"get_deployment", "", read},
		// credential handling
		{"get_password", "", hc | read},
		{"x", "Revoke an access token", hc},
		{"rotate_api_key", "", hc},
		{"count_tokens", "", 0},
		{"x", "Requires an API key", 0},
		// outbound network
		{"sendEmail", "", out},
		{"post_message", "", out},
		{"x", "Make an HTTP request", out},
		{"upload_file", "", out},
		{"fetch_url", "", out | read},
		{"get_posts", "", read}, // "posts" is the noun
		{"send_payment", "", hc | out},
		// read or retrieval
		{"get_user", "", read},
		{"listFiles", "", read},
		{"x", "Search the web", read},
		{"create_user", "", 0},
		{"getaway_planner", "", 0},
		// name splitting: case changes, acronyms, digits
		{"HTTPRequest", "", out},
		{"getURLContent", "", read},
		{"s3Upload", "", out},
		{"DeleteFile", "", hc},
		{"deletefile", "", 0},
		{"x", "sendEmail is deprecated", 0}, // descriptions are not split
		// links are skipped, up to the next whitespace
		{"x", "See https://docs.example.com/send/payments for details", 0},
		{"x", "Docs: HTTPS://EXAMPLE.COM/fetch", 0},
		{"x", "fetch https://example.com", out | read},
		{"x", "(see:https://a.b/pay) then send", out},
		{"x", "x_https://a.b/pay\tsend", out},
		{"link", "://pay\nsend", out},
		// the name's last word is not swallowed by the separator
		{"send", "", out},
		// IGNORECASE folding as for the classes: ſ is s, K (Kelvin) is k
		{"ſend", "", out},
		{"rotate_\u212Aey", "", hc},
		{"x", "SEND", out},
		// non-word characters bound words, invalid bytes included
		{"x", "send\xffpay", hc | out},
		{"x", "séndé", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name+" : "+tc.desc, func(t *testing.T) {
			if got := Surface([]byte(tc.name), []byte(tc.desc)); got != tc.want {
				t.Errorf("Surface(%q, %q) = %v, want %v", tc.name, tc.desc, got.IDs(), tc.want.IDs())
			}
			if got, want := Surface([]byte(tc.name), []byte(tc.desc)), referenceSurface(tc.name, tc.desc); got != want {
				t.Errorf("Surface(%q, %q) = %v, reference %v", tc.name, tc.desc, got.IDs(), want.IDs())
			}
		})
	}
}

func TestSurfaceFigures(t *testing.T) {
	figs := SurfaceFigures()
	inter, read := &figs[0], &figs[1]
	tests := []struct {
		f       *SurfaceFigure
		s       SurfaceSet
		classes Set
		want    bool
	}{
		{inter, HighConsequence | OutboundNetwork, 0, true},
		{inter, HighConsequence, URLEndpoint, true},
		{inter, HighConsequence, 0, false},
		{inter, HighConsequence, CredentialValue | FilesystemPath, false},
		{inter, OutboundNetwork, URLEndpoint, false},
		{inter, ReadRetrieval | OutboundNetwork, 0, false},
		{read, ReadRetrieval, 0, true},
		{read, ReadRetrieval | HighConsequence, URLEndpoint, true},
		{read, OutboundNetwork, 0, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %v %v", tc.f.ID, tc.s.IDs(), labels(tc.classes)), func(t *testing.T) {
			if got := tc.f.Counts(tc.s, tc.classes); got != tc.want {
				t.Errorf("%s.Counts(%v, %v) = %v, want %v", tc.f.ID, tc.s.IDs(), labels(tc.classes), got, tc.want)
			}
		})
	}
	if inter.CountServers || !read.CountServers {
		t.Errorf("only the read/retrieval figure counts servers")
	}
}

// TestSurfaceRuleText checks that the text the report prints names every
// word the matcher uses and says that the figures are non-normative.
func TestSurfaceRuleText(t *testing.T) {
	ids := map[string]bool{}
	var bits SurfaceSet
	for _, r := range SurfaceRules() {
		if ids[r.ID] || r.Bit == 0 || bits&r.Bit != 0 {
			t.Errorf("surface rule %q: duplicate id or bit", r.ID)
		}
		ids[r.ID] = true
		bits |= r.Bit
		for _, c := range r.Clauses {
			if !strings.Contains(r.Rule, c.Aspect+":") {
				t.Errorf("%s: rule text lacks the aspect %q", r.ID, c.Aspect)
			}
			for _, words := range c.Words {
				if want := "{" + strings.Join(words, ", ") + "}"; !strings.Contains(r.Rule, want) {
					t.Errorf("%s: rule text lacks %s", r.ID, want)
				}
			}
		}
	}
	for _, f := range SurfaceFigures() {
		if !strings.Contains(f.Rule, "Non-normative") {
			t.Errorf("figure %s: rule text does not say it is non-normative", f.ID)
		}
		for _, bit := range []SurfaceSet{f.Need, f.AnyOf} {
			if r := surfaceRuleOf(bit); r != nil && !strings.Contains(f.Rule, r.Rule) {
				t.Errorf("figure %s: rule text lacks the %s signal's rule", f.ID, r.ID)
			}
		}
		for _, id := range f.OrClasses.IDs(Classes) {
			if !strings.Contains(f.Rule, id) {
				t.Errorf("figure %s: rule text lacks %s", f.ID, id)
			}
		}
	}
	if got := (HighConsequence | ReadRetrieval).IDs(); !slices.Equal(got, []string{"high-consequence", "read-retrieval"}) {
		t.Errorf("IDs = %q", got)
	}
}

func TestSurfaceDoesNotAllocate(t *testing.T) {
	name, desc := []byte("sendPaymentLink"), []byte("Sends a payment link by email; see https://example.com/docs. Ünïcödé ſend")
	if n := testing.AllocsPerRun(100, func() { Surface(name, desc) }); n != 0 {
		t.Errorf("Surface allocates %v times per call", n)
	}
}

// TestSurfaceMatchesReferenceOnCorpus compares the matcher with the
// reference on real tool names and descriptions.
func TestSurfaceMatchesReferenceOnCorpus(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(realcorpus.MustRead(t)))
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Tool struct {
				Name        any `json:"name"`
				Description any `json:"description"`
			} `json:"tool"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		name, _ := rec.Tool.Name.(string)
		desc, _ := rec.Tool.Description.(string)
		if got, want := Surface([]byte(name), []byte(desc)), referenceSurface(name, desc); got != want {
			t.Errorf("Surface(%q, %.80q) = %v, reference %v", name, desc, got.IDs(), want.IDs())
		}
		n++
	}
	if n == 0 {
		t.Fatal("no tools read from the real corpus")
	}
}

func FuzzSurface(f *testing.F) {
	for _, p := range cornerPairs() {
		f.Add(p[0], p[1])
	}
	f.Add("sendEmail", "see https://x.y/pay now")
	f.Add("HTTPRequest_deleteFile", "x://\u212Aey\tfetch")
	f.Add("aBCdE_f1G", "run\xed\xa0\x80code")
	f.Fuzz(func(t *testing.T, name, desc string) {
		if got, want := Surface([]byte(name), []byte(desc)), referenceSurface(name, desc); got != want {
			t.Fatalf("Surface(%q, %q) = %v, reference %v", name, desc, got.IDs(), want.IDs())
		}
	})
}

var (
	lowerUpper   = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	acronymUpper = regexp.MustCompile(`([A-Z])([A-Z][a-z])`)
)

// referenceSurface is the slow, literal transcription of the documented
// rule: split the name with regular expressions, build the lowered haystack
// as cells, blank out links, and look every maximal run up in the word lists.
func referenceSurface(name, desc string) SurfaceSet {
	// '-' is a boundary that, unlike whitespace, does not end a link.
	name = strings.ReplaceAll(name, "_", "-")
	name = lowerUpper.ReplaceAllString(name, "$1-$2")
	name = acronymUpper.ReplaceAllString(name, "$1-$2")
	var cells []cell
	var src []byte // the ASCII character behind each cell, 0 for others
	for _, s := range []string{name, " : ", desc} {
		for i := 0; i < len(s); {
			c := s[i]
			if c < 0x80 {
				cells = append(cells, cell{fold: asciiFold[c]})
				src = append(src, c)
				i++
				continue
			}
			r, n := decodeRune(s[i:])
			before := len(cells)
			cells = lowerCells(cells, r)
			for range len(cells) - before {
				src = append(src, 0)
			}
			i += n
		}
	}
	skipped := make([]bool, len(cells))
	for j := 0; j+2 < len(cells); j++ {
		if skipped[j] || src[j] != ':' || src[j+1] != '/' || src[j+2] != '/' {
			continue
		}
		start := j
		for start > 0 && cells[start-1].fold != 0 {
			start--
		}
		end := j + 3
		for end < len(cells) && strings.IndexByte(" \t\n\r\v\f", src[end]) < 0 {
			end++
		}
		for k := start; k < end; k++ {
			skipped[k] = true
		}
	}
	words := map[string]bool{}
	var run []byte
	for k := 0; k <= len(cells); k++ {
		if k < len(cells) && !skipped[k] && cells[k].fold != 0 {
			run = append(run, cells[k].fold)
			continue
		}
		words[string(run)] = true
		run = run[:0]
	}
	var s SurfaceSet
	for _, r := range SurfaceRules() {
		for _, c := range r.Clauses {
			all := true
			for _, list := range c.Words {
				if !slices.ContainsFunc(list, func(w string) bool { return words[w] }) {
					all = false
				}
			}
			if all {
				s |= r.Bit
			}
		}
	}
	return s
}

// BenchmarkSurface reports haystack MB/s of the surface matcher on the real
// tool names and descriptions.
func BenchmarkSurface(b *testing.B) {
	var pairs [][2][]byte
	var size int64
	sc := bufio.NewScanner(bytes.NewReader(realcorpus.MustRead(b)))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			Tool struct {
				Name        any `json:"name"`
				Description any `json:"description"`
			} `json:"tool"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		name, _ := rec.Tool.Name.(string)
		desc, _ := rec.Tool.Description.(string)
		pairs = append(pairs, [2][]byte{[]byte(name), []byte(desc)})
		size += int64(len(name) + 3 + len(desc))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var sink SurfaceSet
	cpu := startCPU(b)
	for b.Loop() {
		for _, p := range pairs {
			sink |= Surface(p[0], p[1])
		}
	}
	cpu.stop(size)
	_ = sink
}
