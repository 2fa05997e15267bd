package agentconfig

import (
	"regexp"
	"strings"
)

// variable matches ${env:VAR}, ${input:ID} and ${VAR}, the forms the
// clients substitute (VS Code: env and input; Claude Code, Cursor, Gemini:
// ${VAR}).
var variable = regexp.MustCompile(`\$\{(?:(env|input):)?([A-Za-z_][A-Za-z0-9_.-]*)(?::-([^}]*))?\}`)

// bareVariable is $VAR, which Gemini CLI substitutes as well as ${VAR};
// the other clients leave it as written, so it is read for Gemini alone.
var bareVariable = regexp.MustCompile(`\$\{(?:(env|input):)?([A-Za-z_][A-Za-z0-9_.-]*)(?::-([^}]*))?\}|\$()([A-Za-z_][A-Za-z0-9_]*)()`)

// Resolve substitutes the variables in s's command, args, env, URL and
// headers from lookup (os.LookupEnv in use). An input ID is looked up as
// written and then as an environment name (upper case, '-' and '.' as
// '_'), since a scan cannot prompt. missing lists the variables found
// nowhere, sorted and without duplicates: a server with any is one that
// needs configuration, not one that failed. Values are never logged here;
// callers print Server fields only from the unresolved Server.
func Resolve(s Server, lookup func(string) (string, bool)) (out Server, missing []string) {
	seen := map[string]bool{}
	re := variable
	if s.Client == Gemini {
		re = bareVariable
	}
	sub := func(v string) string {
		return re.ReplaceAllStringFunc(v, func(m string) string {
			// Pad to bareVariable's groups so both forms read alike.
			g := append(re.FindStringSubmatch(m), "", "", "")[:7]
			kind, name, def := g[1]+g[4], g[2]+g[5], g[3]+g[6]
			names := []string{name}
			if kind == "input" {
				names = append(names, strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)))
			}
			for _, n := range names {
				if val, ok := lookup(n); ok {
					return val
				}
			}
			if strings.Contains(m, ":-") {
				return def
			}
			key := name
			if kind != "" {
				key = kind + ":" + name
			}
			if !seen[key] {
				seen[key] = true
				missing = append(missing, key)
			}
			return ""
		})
	}
	out = s
	out.Command = sub(s.Command)
	out.URL = sub(s.URL)
	out.Cwd = sub(s.Cwd)
	out.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		out.Args[i] = sub(a)
	}
	out.Env = subMap(s.Env, sub)
	out.Headers = subMap(s.Headers, sub)
	sortStrings(missing)
	return out, missing
}

func subMap(m map[string]string, sub func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = sub(m[k])
	}
	return out
}

// OnlyVariables says v holds nothing but variable references (and the
// words "Bearer"/"Basic" before one), so printing it reveals no secret.
func OnlyVariables(v string) bool {
	rest := strings.TrimSpace(variable.ReplaceAllString(v, ""))
	rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(rest, "Bearer"), "Basic"))
	return rest == "" && variable.MatchString(v)
}
