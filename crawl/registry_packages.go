package crawl

import (
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
)

// registryPackage is one item of a server entry's "packages".
type registryPackage struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl"`
	Identifier      string `json:"identifier"`
	Version         string `json:"version"`
	FileSHA256      string `json:"fileSha256"`
	RuntimeHint     string `json:"runtimeHint"`
	Transport       struct {
		Type string `json:"type"`
	} `json:"transport"`
	RuntimeArguments []registryArgument `json:"runtimeArguments"`
	PackageArguments []registryArgument `json:"packageArguments"`
	Env              []struct {
		Name       string  `json:"name"`
		IsRequired bool    `json:"isRequired"`
		IsSecret   bool    `json:"isSecret"`
		Default    *string `json:"default"`
	} `json:"environmentVariables"`
}

type registryArgument struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Value      string  `json:"value"`
	Default    *string `json:"default"`
	IsRequired bool    `json:"isRequired"`
	Variables  map[string]struct {
		Default *string `json:"default"`
	} `json:"variables"`
}

// Reasons a package of a registry entry is left out.
const (
	skipPackageDuplicate = "same package as an earlier entry"
)

// appendPackageCandidates adds the packages of entry e to out, each a
// candidate whose server id is its coordinate (npm:NAME@VERSION), with the
// same provenance as a remote. Every package is kept, whatever its type or
// transport, complete or not: the crawl records the ones it cannot run,
// and why. Only a second listing of the same coordinate is left out.
func appendPackageCandidates(out []Candidate, registry string, e *registryEntry, seen map[string]bool, st *RegistryStats) []Candidate {
	for i := range e.Server.Packages {
		st.Packages++
		p := packageOf(&e.Server.Packages[i], e.Server.Name)
		if seen[p.ID()] {
			st.Skipped[skipPackageDuplicate]++
			continue
		}
		seen[p.ID()] = true
		if p.Invalid != "" {
			st.Invalid++
		}
		out = append(out, Candidate{Line: len(out) + 1, Package: p,
			Record: runners.PackageRecord(p, registry, e.Server.Name, e.Server.Version)})
		st.Kept++
	}
	return out
}

func arguments(in []registryArgument) []runners.Argument {
	var out []runners.Argument
	for _, a := range in {
		arg := runners.Argument{Type: a.Type, Name: a.Name, Value: a.Value, Default: a.Default, Required: a.IsRequired}
		for k, v := range a.Variables {
			if arg.Variables == nil {
				arg.Variables = map[string]*string{}
			}
			arg.Variables[k] = v.Default
		}
		out = append(out, arg)
	}
	return out
}

// packageOf is the package entry rp of server names, as the crawl runs it;
// an entry that names nothing fetchable is kept with the reason (Invalid),
// so that it becomes a record, not a line on standard error.
func packageOf(rp *registryPackage, server string) *runners.Package {
	p := &runners.Package{RegistryType: rp.RegistryType, Identifier: rp.Identifier, Version: rp.Version,
		Transport: rp.Transport.Type, RuntimeHint: rp.RuntimeHint, RegistryBaseURL: rp.RegistryBaseURL,
		RuntimeArguments: arguments(rp.RuntimeArguments), PackageArguments: arguments(rp.PackageArguments),
		FileSHA256: strings.ToLower(rp.FileSHA256), Server: server}
	if p.Transport == "" {
		p.Transport = probe.TransportStdio
	}
	for _, v := range rp.Env {
		p.Env = append(p.Env, runners.EnvVar{Name: v.Name, Required: v.IsRequired, Secret: v.IsSecret, Default: v.Default})
	}
	runners.CheckEntry(p)
	return p
}
