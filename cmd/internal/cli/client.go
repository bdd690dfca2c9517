package cli

import (
	"github.com/spf13/pflag"

	"github.com/llmbench/llmbench/replay"
)

// addClientFlag defines --client, the worker's HTTP client, on fs.
func addClientFlag(fs *pflag.FlagSet) *string {
	return fs.String("client", replay.DefaultClient, "worker HTTP client: "+replay.ClientLoop+
		" (one event loop per pinned worker: epoll, timerfd; Linux, http) or "+replay.ClientNet+
		" (a goroutine per in-flight request; what https always uses)")
}
