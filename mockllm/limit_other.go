//go:build !unix

package mockllm

// RaiseFileLimit does nothing where there is no RLIMIT_NOFILE; it reports
// a limit of 0 (unknown).
func RaiseFileLimit() (uint64, error) { return 0, nil }

func fileLimitNote() string { return "" }
