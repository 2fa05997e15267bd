package main

import (
	"strings"
	"testing"
)

// TestClassifySensitivity: --sensitivity adds one key to each line and
// changes nothing else; without it the output has no such key.
func TestClassifySensitivity(t *testing.T) {
	in := `{"server_id": "s", "tools": [{"name": "a", "inputSchema": {"properties": {"privateKey": {}, "repo_path": {}}, "required": ["privateKey"], "items": {"properties": {"base_url": {}}}}}]}` + "\n"
	plain, stderr, code := run(t, in, "classify")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(plain, "sensitivity") {
		t.Errorf("default output has a sensitivity key: %s", plain)
	}
	withSens, stderr, code := run(t, in, "classify", "--sensitivity")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	const want = `, "sensitivity": {"camel_case": {"classes": ["gg:credential-value"], "required_classes": ["gg:credential-value"]}, ` +
		`"word_split": {"classes": ["gg:filesystem-path"], "required_classes": []}, "deep": {"classes": ["gg:url-endpoint"]}}}` + "\n"
	if withSens != strings.TrimSuffix(plain, "}\n")+want {
		t.Errorf("classify --sensitivity:\n%s\nwant the default line with\n%s", withSens, want)
	}
	if _, _, code := run(t, in, "classify", "--sensitivity", "--format", "sarif"); code != 2 {
		t.Errorf("--sensitivity with SARIF: exit %d, want 2", code)
	}
}
