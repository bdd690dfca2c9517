//go:build !unix

package replay

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE; 0 means unknown.
func raiseFileLimit() (soft, hard uint64, err error) { return 0, 0, nil }
