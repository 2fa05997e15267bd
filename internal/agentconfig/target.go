package agentconfig

import (
	"path/filepath"
	"strings"
)

// Kind is the runner a server is scanned through.
type Kind string

// The runners: the package registries the crawl knows, a local command
// run in the sandbox with its own folder visible, and a remote server.
const (
	KindNPM    Kind = "npm"
	KindPyPI   Kind = "pypi"
	KindOCI    Kind = "oci"
	KindLocal  Kind = "local"
	KindRemote Kind = "remote"
)

// Target is what a configured server comes to for a scan.
type Target struct {
	Kind Kind `json:"kind"`
	// Package is the npm or PyPI name, or the OCI image without tag.
	Package string `json:"package,omitempty"`
	// Version is the version or tag the command pins; empty when the
	// client resolves it at start (npx PKG, uvx PKG, IMAGE without tag).
	Version string `json:"version,omitempty"`
	// Spec is what the command asks for when it pins no exact version:
	// an npm range or dist-tag (^1.2, latest), a PyPI version specifier
	// (>=1.0,<2), an image's latest tag; empty when it names none.
	Spec string `json:"spec,omitempty"`
	// Args are the server's own arguments, after the package.
	Args []string `json:"args,omitempty"`
	// Dir is a local command's folder, the one the sandbox shows.
	Dir string `json:"dir,omitempty"`
	// Env are an image's -e/--env options, in order: NAME=VALUE, or NAME
	// alone for the value docker takes from its own environment (the
	// client's, with the config's env over it). Only these reach the
	// container: the config's env is docker's, not the server's.
	Env []string `json:"env,omitempty"`
}

// ContainerEnv is the environment docker run gives the container of an
// OCI target: its -e options, a bare NAME taking its value from env
// (the docker command's environment), or from lookup when env lacks it;
// a NAME found in neither is left out, as docker leaves it out.
func (t Target) ContainerEnv(env map[string]string, lookup func(string) (string, bool)) map[string]string {
	out := map[string]string{}
	for _, e := range t.Env {
		name, value, ok := strings.Cut(e, "=")
		if !ok {
			if value, ok = env[name]; !ok && lookup != nil {
				value, ok = lookup(name)
			}
			if !ok {
				continue
			}
		}
		out[name] = value
	}
	return out
}

// Pinned says the target names an exact version.
func (t Target) Pinned() bool {
	return t.Kind == KindLocal || t.Kind == KindRemote || t.Version != ""
}

// Coordinate is the crawl's package coordinate (npm:NAME@VERSION,
// pypi:NAME@VERSION, oci:IMAGE:TAG or oci:IMAGE@sha256:...), or "" for a
// target that is not a pinned package.
func (t Target) Coordinate() string {
	if t.Version == "" {
		return ""
	}
	switch t.Kind {
	case KindNPM, KindPyPI:
		return string(t.Kind) + ":" + t.Package + "@" + t.Version
	case KindOCI:
		if strings.HasPrefix(t.Version, "sha256:") {
			return "oci:" + t.Package + "@" + t.Version
		}
		return "oci:" + t.Package + ":" + t.Version
	}
	return ""
}

// TargetOf maps a server's command to its runner: npx [-y] PKG[@VER] and
// npm exec to npm, uvx PKG[==VER] and pipx run PKG to PyPI, docker or
// podman run IMAGE to OCI, a URL to remote, anything else to local.
func TargetOf(s Server) Target {
	if s.Command == "" {
		return Target{Kind: KindRemote}
	}
	cmd := filepath.Base(s.Command)
	args := s.Args
	switch cmd {
	case "npx":
		return npmTarget(skipFlags(args, map[string]bool{"-p": true, "--package": true}))
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			rest := skipFlags(args[1:], map[string]bool{"-p": true, "--package": true})
			if len(rest) > 0 && rest[0] == "--" {
				rest = rest[1:]
			}
			return npmTarget(rest)
		}
	case "uvx":
		return pypiTarget(skipFlags(args, map[string]bool{"--from": true, "--with": true, "--python": true}))
	case "pipx":
		if len(args) > 0 && args[0] == "run" {
			return pypiTarget(skipFlags(args[1:], map[string]bool{"--spec": true, "--python": true}))
		}
	case "docker", "podman":
		if len(args) > 0 && args[0] == "run" {
			return ociTarget(args[1:])
		}
	}
	dir := s.Cwd
	if dir == "" {
		dir = filepath.Dir(s.File)
	}
	return Target{Kind: KindLocal, Dir: dir, Args: args}
}

// skipFlags drops leading options; those in withValue take the next word.
func skipFlags(args []string, withValue map[string]bool) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--" {
		if withValue[args[0]] && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	return args
}

func npmTarget(args []string) Target {
	if len(args) == 0 {
		return Target{Kind: KindNPM}
	}
	word := args[0]
	name, ver := word, ""
	if at := strings.LastIndex(word, "@"); at > 0 {
		name, ver = word[:at], word[at+1:]
	}
	spec := ""
	if ver == "latest" || strings.ContainsAny(ver, "^~<>*x ") || (ver != "" && !startsWithDigit(ver)) {
		// A range or a dist-tag: resolved at start, so not pinned.
		ver, spec = "", ver
	}
	return Target{Kind: KindNPM, Package: name, Version: ver, Spec: spec, Args: args[1:]}
}

func pypiTarget(args []string) Target {
	if len(args) == 0 {
		return Target{Kind: KindPyPI}
	}
	name, ver, _ := strings.Cut(args[0], "==")
	if at := strings.LastIndex(name, "@"); at > 0 && ver == "" {
		name, ver = name[:at], name[at+1:]
	}
	spec := ""
	if ver == "" {
		// A version specifier (NAME>=1.0,<2, NAME~=1.2): resolved at
		// start, so not pinned.
		if i := strings.IndexAny(name, "<>!~="); i > 0 {
			name, spec = strings.TrimSpace(name[:i]), name[i:]
		}
	} else if strings.ContainsAny(ver, "<>!~=,*") {
		// NAME==1.*, NAME==1.0,<2: a specifier, not one version.
		ver, spec = "", "=="+ver
	}
	return Target{Kind: KindPyPI, Package: name, Version: ver, Spec: spec, Args: args[1:]}
}

// ociValued are the docker/podman run options that take a value.
var ociValued = map[string]bool{"-e": true, "--env": true, "-v": true, "--volume": true, "-p": true, "--publish": true,
	"--name": true, "--network": true, "--net": true, "-w": true, "--workdir": true, "-u": true, "--user": true,
	"--entrypoint": true, "--env-file": true, "--mount": true, "--platform": true, "-l": true, "--label": true, "--pull": true}

func ociTarget(args []string) Target {
	var env []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--" {
		opt, value, inline := strings.Cut(args[0], "=")
		if !inline && ociValued[opt] && len(args) > 1 {
			value, args = args[1], args[1:]
		}
		if opt == "-e" || opt == "--env" {
			env = append(env, value)
		}
		args = args[1:]
	}
	t := ociRef(args)
	t.Env = env
	return t
}

// ociRef is the target of docker run's words after its options: the image
// and the server's arguments.
func ociRef(args []string) Target {
	if len(args) == 0 {
		return Target{Kind: KindOCI}
	}
	ref := args[0]
	if at := strings.Index(ref, "@"); at > 0 {
		return Target{Kind: KindOCI, Package: ref[:at], Version: ref[at+1:], Args: args[1:]}
	}
	if c := strings.LastIndex(ref, ":"); c > strings.LastIndex(ref, "/") {
		tag, spec := ref[c+1:], ""
		if tag == "latest" {
			tag, spec = "", "latest"
		}
		return Target{Kind: KindOCI, Package: ref[:c], Version: tag, Spec: spec, Args: args[1:]}
	}
	return Target{Kind: KindOCI, Package: ref, Args: args[1:]}
}

// startsWithDigit says v looks like a version (1.2.3, 1.2.3-beta.1) rather
// than a dist-tag (next, beta).
func startsWithDigit(v string) bool {
	return v != "" && v[0] >= '0' && v[0] <= '9'
}
