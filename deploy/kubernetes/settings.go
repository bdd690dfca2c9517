package kubernetes

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/llmbench/llmbench/replay"
)

// Settings are the generator's options as `replay kubernetes` is given them, before the
// checks that can be made offline; Options makes them, in the command line's order, each
// error naming its flag.
type Settings struct {
	Plan          string
	Shards        int
	URLs          []string
	Image         string
	RunID         string
	Namespace     string
	ResultsClaim  string
	PlanClaim     string
	PlanClaimPath string
	CPU, Memory   string
	TTL           time.Duration
	// APIKeySecret is --api-key-secret, NAME or NAME:KEY.
	APIKeySecret string
	// The start: the rendezvous (port, timeout) or a fixed --start-in or --start-at; each
	// ...Set says the flag was given.
	RendezvousPort                          int
	RendezvousTimeout, StartIn              time.Duration
	StartAt                                 string
	RendezvousPortSet, RendezvousTimeoutSet bool
	StartInSet                              bool
	// Deadline is --active-deadline (DeadlineSet: given).
	Deadline    time.Duration
	DeadlineSet bool
	// ReplayArgs are the replay flags after "--"; CheckReplayArgs checks them as every shard
	// will parse them (keySecret: --api-key-secret is given) and returns replay's grace period.
	ReplayArgs      []string
	CheckReplayArgs func(args []string, keySecret bool) (time.Duration, error)
}

// Options checks s and reads the plan: what Print and Preflight take.
func (s Settings) Options(now time.Time) (*Options, error) {
	switch {
	case s.Plan == "":
		return nil, errors.New("--plan is required")
	case s.Shards < 1:
		return nil, fmt.Errorf("--shards %d: want at least 1", s.Shards)
	case len(s.URLs) == 0:
		return nil, errors.New("--url is required")
	case s.Image == "":
		return nil, errors.New("--image is required")
	case s.StartInSet && s.StartAt != "":
		return nil, errors.New("--start-in and --start-at: give one")
	case s.StartInSet && s.StartIn <= 0:
		return nil, fmt.Errorf("--start-in %v: must be positive", s.StartIn)
	case (s.StartInSet || s.StartAt != "") && (s.RendezvousPortSet || s.RendezvousTimeoutSet):
		return nil, errors.New("--rendezvous-port and --rendezvous-timeout go with the rendezvous, not with a fixed --start-in or --start-at")
	case s.RendezvousTimeout <= 0:
		return nil, fmt.Errorf("--rendezvous-timeout %v: must be positive", s.RendezvousTimeout)
	case s.TTL <= 0:
		return nil, fmt.Errorf("--ttl %v: must be positive", s.TTL)
	case s.DeadlineSet && s.Deadline <= 0:
		return nil, fmt.Errorf("--active-deadline %v: must be positive", s.Deadline)
	}
	if err := CheckCPU(s.CPU); err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	if err := CheckMemory(s.Memory); err != nil {
		return nil, fmt.Errorf("--%w", err)
	}
	for _, u := range s.URLs {
		if err := CheckURL(u); err != nil {
			return nil, err
		}
	}
	grace, err := s.CheckReplayArgs(s.ReplayArgs, s.APIKeySecret != "")
	if err != nil {
		return nil, err
	}
	secret, secretKey, _ := strings.Cut(s.APIKeySecret, ":")
	shape, err := ReadPlanShape(s.Plan)
	if err != nil {
		return nil, err
	}
	o := Options{PlanHash: shape.Hash, PlanSize: shape.Size, PlanDuration: shape.Duration, Shards: s.Shards, URLs: s.URLs, Image: s.Image, Now: now,
		RunID: s.RunID, Namespace: s.Namespace, ResultsClaim: s.ResultsClaim, PlanClaim: s.PlanClaim, PlanClaimPath: s.PlanClaimPath,
		CPU: s.CPU, Memory: s.Memory, TTL: s.TTL, Deadline: s.Deadline, Grace: grace, ReplayArgs: s.ReplayArgs,
		RendezvousPort: s.RendezvousPort, RendezvousTimeout: s.RendezvousTimeout, APIKeySecret: secret, APIKeySecretKey: secretKey}
	if err := shape.CheckShards(s.Shards); err != nil {
		return nil, err
	}
	switch {
	case s.StartInSet:
		o.StartAt = now.Add(s.StartIn)
	case s.StartAt != "":
		if o.StartAt, err = replay.ParseStartAt(s.StartAt, now); err != nil {
			return nil, err
		}
		if !o.StartAt.After(now) {
			return nil, fmt.Errorf("--start-at %s is in the past (now %s): every shard would refuse it",
				o.StartAt.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
		}
	}
	if err := replay.CheckStartAhead(o.StartAt, now); err != nil { // every shard would refuse it
		return nil, fmt.Errorf("--start-in/--%w", err)
	}
	if o.RunID == "" {
		o.RunID = fmt.Sprintf("llmbench-%s-%d", o.PlanHash[:8], now.Unix())
	}
	if o.PlanClaim == "" {
		b, err := os.ReadFile(s.Plan)
		if err != nil {
			return nil, err
		}
		o.PlanBytes = b
	}
	return &o, nil
}
