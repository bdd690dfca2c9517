package replay

// AllowedCPUs returns the CPUs this process may run on, so that a generator validation can
// say which CPUs were left to the mock server: those the workers do not use.
func AllowedCPUs() ([]int, error) { return allowedCPUs() }
