// Package runners installs and runs the crawl's packaged servers in the
// sandbox and has crawl/probe speak MCP to them over stdio. Each registry
// type has one Runner in its own file (npm.go, pypi.go, oci.go, mcpb.go),
// listed in the one table of table.go: what its coordinates name, what
// the machine needs, how a package is installed into the shared cache and
// run. Nothing else dispatches on a registry type. It is the only crawl
// package that imports internal/sandbox and internal/ociroot.
package runners
