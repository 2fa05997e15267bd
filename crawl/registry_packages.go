package crawl

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
			Record: packageRecord(p, registry, e.Server.Name, e.Server.Version)})
		st.Kept++
	}
	return out
}

func arguments(in []registryArgument) []Argument {
	var out []Argument
	for _, a := range in {
		arg := Argument{Type: a.Type, Name: a.Name, Value: a.Value, Default: a.Default, Required: a.IsRequired}
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
