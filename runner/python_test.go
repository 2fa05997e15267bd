package runner

// referencePy is the Python reference the run's figures are held to.
const referencePy = "../bench/reference.py"
