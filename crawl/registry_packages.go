package crawl

// registryPackage is one item of a server entry's "packages".
type registryPackage struct {
	RegistryType    string `json:"registryType"`
	RegistryBaseURL string `json:"registryBaseUrl"`
	Identifier      string `json:"identifier"`
	Version         string `json:"version"`
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
}

// Reasons a package of a registry entry is left out.
const (
	skipPackageIncomplete = "package without registryType, identifier or version"
	skipPackageDuplicate  = "same package as an earlier entry"
)

// appendPackageCandidates adds the packages of entry e to out, each a
// candidate whose server id is its coordinate (npm:NAME@VERSION), with the
// same provenance as a remote. Every package is kept, whatever its type or
// transport: the crawl records the ones it cannot run.
func appendPackageCandidates(out []Candidate, registry string, e *registryEntry, seen map[string]bool, st *RegistryStats) []Candidate {
	for _, rp := range e.Server.Packages {
		st.Packages++
		if rp.RegistryType == "" || rp.Identifier == "" || rp.Version == "" {
			st.Skipped[skipPackageIncomplete]++
			continue
		}
		p := &Package{RegistryType: rp.RegistryType, Identifier: rp.Identifier, Version: rp.Version,
			Transport: rp.Transport.Type, RuntimeHint: rp.RuntimeHint, RegistryBaseURL: rp.RegistryBaseURL,
			RuntimeArguments: arguments(rp.RuntimeArguments), PackageArguments: arguments(rp.PackageArguments)}
		if p.Transport == "" {
			p.Transport = TransportStdio
		}
		for _, v := range rp.Env {
			p.Env = append(p.Env, EnvVar{Name: v.Name, Required: v.IsRequired, Secret: v.IsSecret, Default: v.Default})
		}
		if seen[p.ID()] {
			st.Skipped[skipPackageDuplicate]++
			continue
		}
		seen[p.ID()] = true
		out = append(out, Candidate{Line: len(out) + 1, Package: p,
			Record: packageRecord(p, registry, e.Server.Name, e.Server.Version)})
		st.Kept++
	}
	return out
}

func arguments(in []registryArgument) []Argument {
	var out []Argument
	for _, a := range in {
		out = append(out, Argument{Type: a.Type, Name: a.Name, Value: a.Value, Default: a.Default, Required: a.IsRequired})
	}
	return out
}
