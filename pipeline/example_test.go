package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// Run a whole census from Go: a folder with the snapshot's three files,
// verified against a sha256sum manifest, every output written to out.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "census")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	writeGz := func(name, text string) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text))
		zw.Close()
		os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
	writeGz("server_tools.jsonl.gz", strings.Join([]string{
		`{"server_id": "a", "tools": [{"name": "pay", "inputSchema": {"properties": {"amount": {"type": "number"}}, "required": ["amount"]}}]}`,
		`{"server_id": "b", "tools": [{"name": "get", "inputSchema": {"properties": {"url": {"type": "string"}}}}, {"name": "ls", "inputSchema": {"properties": {"dir": {}}}}]}`,
	}, "\n")+"\n")
	writeGz("servers.jsonl.gz", `{"server_id": "a"}`+"\n"+`{"server_id": "b"}`+"\n")
	os.WriteFile(filepath.Join(dir, "candidates_remotes.jsonl"), []byte(`{"url": "https://a.example"}`+"\n"), 0o644)

	// A release's own hashes come in sha256sum format (a release's
	// SHA256SUMS file, read with hashverify.ReadSHA256Sums). Here a first,
	// unverified run computes them, and the second run checks them.
	out := filepath.Join(dir, "out")
	r, err := pipeline.Run(context.Background(), pipeline.Options{Data: dir, Out: out, NoVerify: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	var sums strings.Builder
	for _, in := range r.Inputs {
		fmt.Fprintf(&sums, "%s  %s\n", in.SHA256, in.Name)
	}
	manifest, err := hashverify.ParseSHA256Sums(strings.NewReader(sums.String()), "SHA256SUMS")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err = pipeline.Run(context.Background(), pipeline.Options{Data: dir, Out: out, Manifest: manifest, ManifestName: "SHA256SUMS"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Tools, "tools on", r.Servers, "servers, verified:", r.Verified)
	for _, id := range []string{"gg:money-amount", "gg:url-endpoint", "gg:filesystem-path"} {
		c := r.Classes[id]
		fmt.Printf("%s: %d tools, %d with a required property\n", id, c.Tools, c.Required)
	}
	// Output:
	// 3 tools on 2 servers, verified: true
	// gg:money-amount: 1 tools, 1 with a required property
	// gg:url-endpoint: 1 tools, 0 with a required property
	// gg:filesystem-path: 1 tools, 0 with a required property
}
