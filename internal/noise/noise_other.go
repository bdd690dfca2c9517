//go:build !linux

package noise

import "errors"

// pinThread cannot pin a thread here: the sampler runs where the system puts it.
func pinThread(int) error { return errors.New("noise: pinning a thread needs Linux") }
