package sandbox

import "strings"

// MountPoints are the folders an image root (Spec.RootFS) needs for the
// sandbox to mount on, relative to the root: bwrap cannot make them in a
// read-only root. Nothing of the host's is shown in an image root: no
// helper runs inside the sandbox (launch).
var MountPoints = []string{"proc", "dev", "tmp", strings.TrimPrefix(Home, "/")}
