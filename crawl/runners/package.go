package runners

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/jsontext"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// Registry types of a package, as server.json names them.
const (
	RegistryNPM   = "npm"
	RegistryPyPI  = "pypi"
	RegistryOCI   = "oci"
	RegistryNuGet = "nuget"
	RegistryMCPB  = "mcpb"
)

// Package is a packaged server of a registry entry: how to fetch it and
// how to run it. Its fields are server.json's, in the census files' names.
type Package struct {
	RegistryType     string     `json:"registry_type"`
	Identifier       string     `json:"identifier"`
	Version          string     `json:"package_version"`
	Transport        string     `json:"transport"`
	RuntimeHint      string     `json:"runtime_hint,omitempty"`
	RuntimeArguments []Argument `json:"runtime_arguments,omitempty"`
	PackageArguments []Argument `json:"package_arguments,omitempty"`
	Env              []EnvVar   `json:"environment_variables,omitempty"`
	// RegistryBaseURL is where the entry says the package lives. It is
	// recorded, never fetched from: packages come from the registry the
	// package manager is configured with.
	RegistryBaseURL string `json:"registry_base_url,omitempty"`
	// FileSHA256 is the SHA-256 an MCPB entry gives of its bundle, hex.
	FileSHA256 string `json:"file_sha256,omitempty"`
	// Invalid says why the entry, as published, names no package that can
	// be fetched (no identifier, no exact version, an identifier that is
	// not an image reference or URL): the package is recorded with this
	// reason rather than dropped.
	Invalid string `json:"invalid,omitempty"`
	// Server is the registry name of the entry an invalid package comes
	// from: its coordinate holds it, so that two servers' broken entries
	// stay two records.
	Server string `json:"-"`
}

// Argument is one runtime or package argument: positional (Value) or
// named (Name, and Value when it takes one).
type Argument struct {
	Type     string  `json:"type"`
	Name     string  `json:"name,omitempty"`
	Value    string  `json:"value,omitempty"`
	Default  *string `json:"default,omitempty"`
	Required bool    `json:"required,omitempty"`
	// Variables are the {name} placeholders of Value or Default, with
	// their defaults (null: none, and the argument is left out).
	Variables map[string]*string `json:"variables,omitempty"`
}

// EnvVar is an environment variable the server reads.
type EnvVar struct {
	Name     string  `json:"name"`
	Required bool    `json:"required,omitempty"`
	Secret   bool    `json:"secret,omitempty"`
	Default  *string `json:"default,omitempty"`
}

// ID is the package's census server id: type:identifier@version, e.g.
// npm:@scope/name@1.2.3; for an image, oci:HOST/NAME:TAG or
// oci:HOST/NAME@sha256:DIGEST (its reference names the version); for a
// bundle, mcpb:URL. An invalid package's id ends in #SERVER.
func (p *Package) ID() string {
	id := p.RegistryType + ":" + p.Identifier
	if r, _ := lookup(p.RegistryType); r == nil || !r.pinned() {
		id += "@" + p.Version
	}
	if p.Invalid != "" {
		id += "#" + p.Server
	}
	return id
}

// ParsePackageID reads a package coordinate: type:identifier@version (the
// version after the last @ that is not the first character of the
// identifier, so that npm scopes read right), oci:IMAGE with IMAGE a
// reference with a tag or digest, or mcpb:URL.
func ParsePackageID(s string) (*Package, error) {
	typ, rest, ok := strings.Cut(s, ":")
	r, known := lookup(typ)
	switch {
	case !ok || !known:
		return nil, fmt.Errorf("%q: not a package coordinate (want npm:NAME@VERSION, pypi:NAME@VERSION, oci:IMAGE:TAG, oci:IMAGE@sha256:DIGEST or mcpb:URL)", s)
	case r != nil && r.pinned():
		p := &Package{RegistryType: typ, Identifier: rest, Transport: probe.TransportStdio}
		if why := r.check(p); why != "" {
			return nil, fmt.Errorf("%q: %s", s, why)
		}
		return p, nil
	}
	at := strings.LastIndex(rest, "@")
	if at <= 0 || at == len(rest)-1 {
		return nil, fmt.Errorf("%q: a package coordinate needs an exact version (%s:NAME@VERSION)", s, typ)
	}
	return &Package{RegistryType: typ, Identifier: rest[:at], Version: rest[at+1:], Transport: probe.TransportStdio}, nil
}

// IsPackageCoordinate says s names a package (type:...), well formed or
// not, rather than a URL.
func IsPackageCoordinate(s string) bool {
	typ, _, ok := strings.Cut(s, ":")
	return ok && knownRegistryType(typ)
}

func knownRegistryType(t string) bool {
	_, known := lookup(t)
	return known
}

// MissingConfig names the required variables and arguments that have no
// default: the server may need them to start, and none is invented.
func (p *Package) MissingConfig() []string {
	var out []string
	for _, e := range p.Env {
		if e.Required && e.Default == nil {
			out = append(out, e.Name)
		}
	}
	for _, a := range p.PackageArguments {
		for k, d := range a.Variables {
			if d == nil && a.Required {
				out = append(out, "{"+k+"}")
			}
		}
		if a.Required && a.Value == "" && a.Default == nil {
			name := a.Name
			if name == "" {
				name = "positional argument"
			}
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ParsePackageRecord reads the package fields of a candidates line that
// names a package.
func ParsePackageRecord(line []byte) (*Package, error) {
	var p Package
	if err := json.Unmarshal(line, &p); err != nil {
		return nil, err
	}
	var id struct {
		Package string `json:"package"`
		Name    string `json:"name"`
	}
	_ = json.Unmarshal(line, &id)
	p.Server = id.Name
	if p.RegistryType == "" && p.Identifier == "" && p.Invalid == "" {
		// A record with only the coordinate.
		q, err := ParsePackageID(id.Package)
		if err != nil {
			return nil, err
		}
		return q, nil
	}
	if p.Transport == "" {
		p.Transport = probe.TransportStdio
	}
	if p.ID() != id.Package {
		return nil, fmt.Errorf("\"package\" %q does not match registry_type, identifier and package_version (%s)", id.Package, p.ID())
	}
	return &p, nil
}

// PackageRecord is a candidates line of a package, in Python's json.dumps
// layout: the coordinate first, then the package's fields, then the
// provenance of a registry entry.
func PackageRecord(p *Package, registry, name, version string) []byte {
	b := jsontext.AppendString([]byte(`{"package": `), p.ID())
	var fields bytes.Buffer
	enc := json.NewEncoder(&fields)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p) // plain fields; it does not fail
	var m map[string]json.RawMessage
	_ = json.Unmarshal(fields.Bytes(), &m)
	for _, k := range []string{"registry_type", "identifier", "package_version", "transport", "runtime_hint",
		"runtime_arguments", "package_arguments", "environment_variables", "registry_base_url", "file_sha256", "invalid"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		b = append(b, `, "`+k+`": `...)
		b = jsontext.AppendPy(b, v)
	}
	for _, kv := range [][2]string{{"registry", registry}, {"name", name}, {"version", version}} {
		b = append(b, `, "`+kv[0]+`": `...)
		b = jsontext.AppendString(b, kv[1])
	}
	return append(b, '}')
}
