package runners

import (
	"net/url"
	"regexp"
	"strings"
)

// imageRef is an OCI image reference as docker reads it: an optional
// registry host (with a dot or a port, or localhost), a path of lower-case
// components, and a tag, a digest, or both. Nothing a shell, a path or a
// URL would read otherwise gets through.
var imageRef = regexp.MustCompile(`^(?:((?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?)/)?` +
	`([a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*)` +
	`(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$`)

// checkImageRef says why ref is not an image reference with a tag or a
// digest, or "" when it is one. A reference without either would be
// whatever :latest is on the day of the crawl: not a version.
func checkImageRef(ref string) string {
	m := imageRef.FindStringSubmatch(ref)
	switch {
	case m == nil || len(ref) > 512:
		return "not an OCI image reference (HOST/NAME:TAG or HOST/NAME@sha256:DIGEST)"
	case m[3] == "" && m[4] == "":
		return "an OCI image reference without a tag or digest names no version"
	}
	return ""
}

// hasTagOrDigest says ref (an image reference) names a tag or a digest:
// a colon after the last slash, or an @.
func hasTagOrDigest(ref string) bool {
	return strings.Contains(ref, "@") || strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":")
}

// checkBundleURL says why u is not where a bundle can be fetched from (an
// http or https URL with a host and no credentials), or "" when it is.
func checkBundleURL(u string) string {
	p, err := url.Parse(u)
	switch {
	case err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.Opaque != "":
		return "an MCPB identifier is the bundle's http or https URL"
	case p.User != nil:
		return "an MCPB URL with credentials"
	}
	return ""
}

// CheckEntry completes a package read from a registry entry and says,
// in p.Invalid, why it names nothing fetchable: no type, no identifier,
// no exact version, an identifier that is not an image reference or a
// bundle's URL. Such a package is kept, so that it becomes a record, not
// a line on standard error.
func CheckEntry(p *Package) {
	r, _ := lookup(p.RegistryType)
	switch {
	case p.RegistryType == "":
		p.Invalid = "package without registryType"
	case p.Identifier == "":
		p.Invalid = "package without identifier"
	case r != nil && r.pinned():
		p.Invalid = r.check(p)
	case p.Version == "":
		p.Invalid = "package without version: the entry names no exact version to install"
	default:
		if r != nil {
			p.Invalid = r.check(p)
		}
	}
	if p.Invalid == "" {
		p.Server = ""
	}
}

var sha256HexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
