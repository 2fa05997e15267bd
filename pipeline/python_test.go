package pipeline

import "github.com/atlas-reproduce/atlas-reproduce/internal/testenv"

// referencePy is the Python reference the run's figures are held to.
var referencePy = testenv.ReferencePy()
