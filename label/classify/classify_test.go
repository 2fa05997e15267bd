package classify

import (
	"slices"
	"testing"
)

func labels(s Set) []string { return append(s.IDs(Classes), s.IDs(Buckets)...) }

// TestSpecExamples checks every ✓/✗ example of the spec's class sections and
// every "Example Classification Vectors" entry. An example given as a bare
// word is the property name with an empty description; a quoted phrase is
// used as the description of an opaque name.
func TestSpecExamples(t *testing.T) {
	const (
		cred  = "gg:credential-value"
		fs    = "gg:filesystem-path"
		cmd   = "gg:command-string"
		money = "gg:money-amount"
		url   = "gg:url-endpoint"
	)
	tests := []struct {
		name, desc string
		class      string // the class the example is about
		want       bool
	}{
		// gg:credential-value
		{"api_key", "", cred, true},
		{"client_secret", "", cred, true},
		{"client-secret", "", cred, true},
		{"x", "bearer token", cred, true},
		{"authorization", "", cred, true},
		{"secretariat_note", "", cred, false},
		{"tokenizer_model", "", cred, false},
		{"authorization_flow_name", "", cred, false},
		{"clientSecret", "", cred, false},
		{"accessKeyId", "", cred, false},
		// gg:filesystem-path
		{"file_path", "", fs, true},
		{"destination_path", "", fs, true},
		{"dir", "", fs, true},
		{"x", "output folder", fs, true},
		{"target_path", "", fs, true},
		{"pathology_code", "", fs, false},
		{"directory_sync_toggle", "", fs, false},
		{"destinationPath", "", fs, false},
		{"x", `C:\Users\me\notes.txt`, fs, false},
		// gg:command-string
		{"shell_cmd", "", cmd, true},
		{"sql", "", cmd, true},
		{"x", "execute code", cmd, true},
		{"args", "", cmd, true},
		{"prompt", "", cmd, true},
		{"commandment_count", "", cmd, false},
		{"scripture_ref", "", cmd, false},
		// gg:money-amount
		{"refund_amount", "", money, true},
		{"x", "total in cents", money, true},
		{"currency", "", money, true},
		{"x", "amount in USD", money, true},
		{"unit_amount", "", money, true},
		{"total_results", "", money, false},
		{"summed", "", money, false},
		// gg:url-endpoint
		{"target_url", "", url, true},
		{"base_url", "", url, true},
		{"webhook", "", url, true},
		{"hostname", "", url, true},
		{"x", "callback URL", url, true},
		{"curriculum", "", url, false},
		{"hostname_label_prefix", "", url, false},
		{"domainKnowledge", "", url, false},
		{"baseUrl", "", url, false},
	}
	for _, tc := range tests {
		t.Run(tc.name+" : "+tc.desc+" "+tc.class, func(t *testing.T) {
			got := slices.Contains(labels(Property(tc.name, tc.desc)), tc.class)
			if got != tc.want {
				t.Errorf("Property(%q, %q): %s = %v, want %v", tc.name, tc.desc, tc.class, got, tc.want)
			}
		})
	}

	// Example Classification Vectors: the exact label list.
	vectors := []struct {
		name, desc string
		want       []string
	}{
		{"cmd", "shell command for execution", []string{cmd}},
		{"destPath", "destination file path", []string{fs}},
		{"webhook_url", "callback endpoint", []string{url}},
		{"refund_amount", "amount in cents", []string{money}},
		{"Authorization", "bearer token", []string{cred}},
		{"total_results", "page size", nil},
		{"data", "request body", []string{"raw_content_blob"}},
	}
	for _, v := range vectors {
		t.Run(v.name+" : "+v.desc, func(t *testing.T) {
			got := labels(Property(v.name, v.desc))
			if !slices.Equal(got, v.want) && !(len(got) == 0 && len(v.want) == 0) {
				t.Errorf("Property(%q, %q) = %v, want %v", v.name, v.desc, got, v.want)
			}
		})
	}
}

// TestRulesMatchSpecPatterns pins the Python patterns kept as data to the
// spec's text, so a typo in a form cannot hide behind a matching oracle.
func TestRulesMatchSpecPatterns(t *testing.T) {
	want := map[string][]string{
		"gg:credential-value": {`(?<![a-z0-9_])(token|apikey|api_key|secret|password|passwd|private_key|access_key|credential|client_secret|bearer|authorization)(?![a-z0-9_])`},
		"gg:filesystem-path":  {`(?<![a-z0-9_])(path|filepath|filename|file_path|dir|directory|folder|target_path|destination_path|dest_path)(?![a-z0-9_])`},
		"gg:command-string":   {`(?<![a-z0-9_])(command|cmd|script|code|expression|sql|statement|shell_cmd|args?|arguments?|instruction|prompt)(?![a-z0-9_])`},
		"gg:money-amount":     {`(?<![a-z0-9_])(amount|price|total|sum|currency|refund_amount|charge_amount|unit_amount|cents)(?![a-z0-9_])`, `\b(amount in|monetary|currency code)\b`},
		"gg:url-endpoint":     {`(?<![a-z0-9_])(url|uri|endpoint|webhook_url|target_url|host|hostname|domain|link|webhook|base_url|callback_url)(?![a-z0-9_])`},
	}
	for id, pats := range want {
		r, ok := Lookup(id)
		if !ok || !r.Normative {
			t.Fatalf("rule %s missing or not normative", id)
		}
		if !slices.Equal(r.Patterns, pats) {
			t.Errorf("%s patterns = %q, want %q", id, r.Patterns, pats)
		}
	}
	for _, id := range []string{"raw_content_blob", "account_identity"} {
		if r, ok := Lookup(id); !ok || r.Normative {
			t.Errorf("bucket %s missing or marked normative", id)
		}
	}
}

// TestFastMatchesReference runs both Go matchers over hand-picked corners.
func TestFastMatchesReference(t *testing.T) {
	for _, p := range cornerPairs() {
		if got, want := Property(p[0], p[1]), referenceProperty(p[0], p[1]); got != want {
			t.Errorf("Property(%q, %q) = %v, reference %v", p[0], p[1], labels(got), labels(want))
		}
		if got, want := PropertyBytes([]byte(p[0]), []byte(p[1])), Property(p[0], p[1]); got != want {
			t.Errorf("PropertyBytes(%q, %q) = %v, Property %v", p[0], p[1], labels(got), labels(want))
		}
	}
}

// cornerPairs are the inputs where Go's and Python's text handling differ.
func cornerPairs() [][2]string {
	return [][2]string{
		{"ſecret", ""}, {"SECRET", ""}, {"ſql", "ı"}, {"İd", ""}, {"\u212Aey", "api\u212Aey"},
		{"apı_key", ""}, {"toKen", ""}, {"x", "İurl"}, {"url\u0307", ""}, {"é_url", ""},
		{"urlé", ""}, {"x", "éamount in"}, {"x", "amount iné"}, {"x", "amount in_"}, {"x", "_amount in"},
		{"x", "amount\u00a0in"}, {"x", "amount  in"}, {"x", "currency code"}, {"x", "currency-code"},
		{"x", "MONETARY"}, {"x", "monetaryé"}, {"x", "ΣAMOUNT IN"}, {"x", "amount ın"}, {"x", "amount İn"},
		{"x", "amount\u0130n"}, {"x", "amount in\u0307"}, {"x", "curren\u017Fy code"}, {"x", "日本amount in本"},
		{"x", "amount in\xed\xa0\x80"}, {"\xed\xa0\x80token", ""}, {"\xff\xfetoken", "\x80"},
		{"destination_path_", ""}, {"destination_pathx", "destination_path"}, {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ""},
		{"", ""}, {"to", ""}, {"from", "to"}, {"email", ""}, {"data", ""}, {"text", "file_content"},
	}
}

func FuzzMatcher(f *testing.F) {
	for _, p := range cornerPairs() {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, name, desc string) {
		if got, want := Property(name, desc), referenceProperty(name, desc); got != want {
			t.Fatalf("Property(%q, %q) = %v, reference %v", name, desc, labels(got), labels(want))
		}
	})
}

// TestIDs checks the shared id table: sorted, masked, never nil, and safe
// to append to.
func TestIDs(t *testing.T) {
	all := Classes | Buckets
	if got := all.IDs(Classes); !slices.Equal(got, []string{"gg:command-string", "gg:credential-value", "gg:filesystem-path", "gg:money-amount", "gg:url-endpoint"}) {
		t.Errorf("IDs(Classes) = %v", got)
	}
	if got := all.IDs(Buckets); !slices.Equal(got, []string{"account_identity", "raw_content_blob"}) {
		t.Errorf("IDs(Buckets) = %v", got)
	}
	if got := (MoneyAmount | RawContentBlob).IDs(Classes); !slices.Equal(got, []string{"gg:money-amount"}) {
		t.Errorf("mask not applied: %v", got)
	}
	if got := Set(0).IDs(Classes); got == nil || len(got) != 0 {
		t.Errorf("empty set: %#v, want a non-nil empty slice (JSON [])", got)
	}
	one := URLEndpoint.IDs(Classes)
	_ = append(one, "extra")
	if got := URLEndpoint.IDs(Classes); !slices.Equal(got, []string{"gg:url-endpoint"}) {
		t.Errorf("append to a returned slice changed the table: %v", got)
	}
}
