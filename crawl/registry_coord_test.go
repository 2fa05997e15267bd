package crawl

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
)

// TestRegistryImagesAndBundles: OCI entries in the shape the registry
// requires (the tag or digest in the identifier, no version) and MCPB
// entries without a version become candidates with coordinates oci:IMAGE
// and mcpb:URL; an entry that names nothing fetchable becomes a record of
// kind install with its reason, never only a count.
func TestRegistryImagesAndBundles(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	hash := strings.Repeat("0f", 32)
	oci := func(id string, extra map[string]any) map[string]any {
		p := map[string]any{"registryType": "oci", "identifier": id, "transport": map[string]any{"type": "stdio"}}
		maps.Copy(p, extra)
		return p
	}
	entries := []map[string]any{
		pkgEntry("io.test/tag", nil, oci("ghcr.io/acme/server:1.2.0", map[string]any{"runtimeHint": "docker",
			"packageArguments": []map[string]any{{"type": "positional", "value": "stdio"}}})),
		pkgEntry("io.test/digest", nil, oci("docker.io/acme/server@"+digest, nil)),
		pkgEntry("io.test/legacy", nil, oci("acme/legacy", map[string]any{"version": "2.0"})),
		pkgEntry("io.test/notag", nil, oci("ghcr.io/acme/notag", nil)),
		pkgEntry("io.test/badref", nil, oci("ghcr.io/Acme/../x:1", nil)),
		pkgEntry("io.test/bundle", nil, map[string]any{"registryType": "mcpb", "identifier": "https://example.org/b.mcpb", "fileSha256": strings.ToUpper(hash)}),
		pkgEntry("io.test/bundle-v", nil, map[string]any{"registryType": "mcpb", "identifier": "https://example.org/v.mcpb", "version": "1.0.0", "fileSha256": hash}),
		pkgEntry("io.test/bundle-file", nil, map[string]any{"registryType": "mcpb", "identifier": "file:///etc/passwd"}),
		pkgEntry("io.test/noversion", nil, map[string]any{"registryType": "npm", "identifier": "tiny"}),
		pkgEntry("io.test/notype", nil, map[string]any{"identifier": "tiny", "version": "1.0.0"}),
		pkgEntry("io.test/noid", nil, map[string]any{"registryType": "pypi", "version": "1.0.0"}),
		// The same broken entry twice in one server is one record.
		pkgEntry("io.test/noid2", nil, map[string]any{"registryType": "pypi"}, map[string]any{"registryType": "pypi"}),
	}
	reg := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 5})
	cands, st, err := FetchRegistry(context.Background(), RegistryOptions{URL: reg.URL, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	prov := func(name string) string {
		return `, "registry": "` + reg.URL + `", "name": "` + name + `", "version": "1.0.0"}`
	}
	want := []string{
		`{"package": "oci:ghcr.io/acme/server:1.2.0", "registry_type": "oci", "identifier": "ghcr.io/acme/server:1.2.0", "package_version": "", "transport": "stdio", "runtime_hint": "docker", "package_arguments": [{"type": "positional", "value": "stdio"}]` + prov("io.test/tag"),
		`{"package": "oci:docker.io/acme/server@` + digest + `", "registry_type": "oci", "identifier": "docker.io/acme/server@` + digest + `", "package_version": "", "transport": "stdio"` + prov("io.test/digest"),
		`{"package": "oci:acme/legacy:2.0", "registry_type": "oci", "identifier": "acme/legacy:2.0", "package_version": "2.0", "transport": "stdio"` + prov("io.test/legacy"),
		`{"package": "oci:ghcr.io/acme/notag#io.test/notag", "registry_type": "oci", "identifier": "ghcr.io/acme/notag", "package_version": "", "transport": "stdio", "invalid": "an OCI image reference without a tag or digest names no version"` + prov("io.test/notag"),
		`{"package": "oci:ghcr.io/Acme/../x:1#io.test/badref", "registry_type": "oci", "identifier": "ghcr.io/Acme/../x:1", "package_version": "", "transport": "stdio", "invalid": "not an OCI image reference (HOST/NAME:TAG or HOST/NAME@sha256:DIGEST)"` + prov("io.test/badref"),
		`{"package": "mcpb:https://example.org/b.mcpb", "registry_type": "mcpb", "identifier": "https://example.org/b.mcpb", "package_version": "", "transport": "stdio", "file_sha256": "` + hash + `"` + prov("io.test/bundle"),
		`{"package": "mcpb:https://example.org/v.mcpb", "registry_type": "mcpb", "identifier": "https://example.org/v.mcpb", "package_version": "1.0.0", "transport": "stdio", "file_sha256": "` + hash + `"` + prov("io.test/bundle-v"),
		`{"package": "mcpb:file:///etc/passwd#io.test/bundle-file", "registry_type": "mcpb", "identifier": "file:///etc/passwd", "package_version": "", "transport": "stdio", "invalid": "an MCPB identifier is the bundle's http or https URL"` + prov("io.test/bundle-file"),
		`{"package": "npm:tiny@#io.test/noversion", "registry_type": "npm", "identifier": "tiny", "package_version": "", "transport": "stdio", "invalid": "package without version: the entry names no exact version to install"` + prov("io.test/noversion"),
		`{"package": ":tiny@1.0.0#io.test/notype", "registry_type": "", "identifier": "tiny", "package_version": "1.0.0", "transport": "stdio", "invalid": "package without registryType"` + prov("io.test/notype"),
		`{"package": "pypi:@1.0.0#io.test/noid", "registry_type": "pypi", "identifier": "", "package_version": "1.0.0", "transport": "stdio", "invalid": "package without identifier"` + prov("io.test/noid"),
		`{"package": "pypi:@#io.test/noid2", "registry_type": "pypi", "identifier": "", "package_version": "", "transport": "stdio", "invalid": "package without identifier"` + prov("io.test/noid2"),
	}
	if len(cands) != len(want) {
		var got []string
		for _, c := range cands {
			got = append(got, string(c.Record))
		}
		t.Fatalf("%d candidates, want %d:\n%s", len(cands), len(want), strings.Join(got, "\n"))
	}
	var lines strings.Builder
	for i, w := range want {
		if got := string(cands[i].Record); got != w {
			t.Errorf("candidate %d:\n got %s\nwant %s", i, got, w)
		}
		lines.WriteString(w + "\n")
	}
	if st.Packages != 13 || st.Kept != 12 || st.Invalid != 7 || !maps.Equal(st.Skipped, map[string]int{skipPackageDuplicate: 1}) {
		t.Errorf("stats %+v: want 13 packages, 12 kept, 7 invalid, one duplicate", st)
	}
	// The candidates file reads back as the same packages, and a crawl
	// of it records every one: the invalid ones as install, with why.
	back, err := ParseCandidates(strings.NewReader(lines.String()), "candidates")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range back {
		if c.Package == nil || c.Package.ID() != cands[i].Package.ID() || c.Package.Invalid != cands[i].Package.Invalid {
			t.Errorf("line %d reads back as %+v, want %s", i+1, c.Package, cands[i].Package.ID())
		}
	}
	if p := back[5].Package; p.FileSHA256 != hash {
		t.Errorf("bundle hash read back as %q", p.FileSHA256)
	}
	pr := &runners.Set{}
	for _, c := range back {
		if c.Package.Invalid == "" {
			continue
		}
		r := pr.Probe(context.Background(), 0, c.Package)
		if r.ErrorKind != probe.KindInstall || !strings.Contains(r.Error, c.Package.Invalid) {
			t.Errorf("%s: %s %q, want install with %q", c.Package.ID(), r.ErrorKind, r.Error, c.Package.Invalid)
		}
	}
}

// TestParseImageAndBundleCoordinates: scan's coordinates for images and
// bundles, and the ones refused.
func TestParseImageAndBundleCoordinates(t *testing.T) {
	digest := "sha256:" + strings.Repeat("01", 32)
	for _, tc := range []struct {
		in, id, err string
	}{
		{in: "oci:ghcr.io/acme/s:1.0", id: "oci:ghcr.io/acme/s:1.0"},
		{in: "oci:127.0.0.1:5000/acme/s@" + digest, id: "oci:127.0.0.1:5000/acme/s@" + digest},
		{in: "oci:localhost:5000/s:v1@" + digest, id: "oci:localhost:5000/s:v1@" + digest},
		{in: "oci:ghcr.io/acme/s", err: "without a tag or digest"},
		{in: "oci:ghcr.io/acme/s@sha256:abc", err: "not an OCI image reference"},
		{in: "oci:/etc/passwd:1", err: "not an OCI image reference"},
		{in: "mcpb:https://example.org/x.mcpb", id: "mcpb:https://example.org/x.mcpb"},
		{in: "mcpb:http://127.0.0.1:8080/x.mcpb", id: "mcpb:http://127.0.0.1:8080/x.mcpb"},
		{in: "mcpb:/etc/passwd", err: "http or https URL"},
		{in: "mcpb:https://u:p@example.org/x.mcpb", err: "credentials"},
		{in: "pypi:tiny@1.0", id: "pypi:tiny@1.0"},
		{in: "pypi:tiny", err: "exact version"},
	} {
		p, err := runners.ParsePackageID(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.err == "" && p.ID() != tc.id:
			t.Errorf("%s: id %s, want %s", tc.in, p.ID(), tc.id)
		}
	}
}
