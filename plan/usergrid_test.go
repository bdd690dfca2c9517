package plan

import (
	"math"
	"sort"
	"testing"

	"github.com/llmbench/llmbench/mmapds"
)

// mmapds.UserOf recovers every profile session's user from its entry instant on a compiled
// user-centric plan: grouped by the recovered user, each user's first session enters at
// start + u/R, each next one right after the previous one's turns (turns·N/R later), and
// every user sends (the plan is the ground truth; a wrong user breaks a chain).
func TestUserOfRecoversSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		users    int
		rate     float64
		turns    int
		count    int
		duration float64
		warmup   int
	}{
		{name: "4 users at 2/s, 3 turns", users: 4, rate: 2, turns: 3, count: 120},
		{name: "7 users at 3.3/s, multi-turn with a warmup", users: 7, rate: 3.3, turns: 3, count: 300, warmup: 9},
		{name: "16 users at 40/s by duration", users: 16, rate: 40, turns: 4, duration: 30},
		{name: "1 user at 0.7/s", users: 1, rate: 0.7, turns: 2, count: 40},
		{name: "50 users at 123.4/s by duration with a warmup", users: 50, rate: 123.4, turns: 3, duration: 20, warmup: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			o.ConversationTurnMean, o.ConversationTurnStddev = tc.turns, 1
			o.UserCentricRate, o.NumUsers = tc.rate, tc.users
			o.RequestCount, o.BenchmarkDuration, o.WarmupRequestCount = tc.count, tc.duration, tc.warmup
			p, _ := compileOpen(t, o)
			users, rate := p.Meta().UserGrid()
			if users != tc.users || rate != tc.rate {
				t.Fatalf("UserGrid %d, %v; want %d, %v", users, rate, tc.users, tc.rate)
			}
			type session struct {
				start int64
				turns int
			}
			sessions := map[uint32]*session{}
			start := int64(math.MaxInt64)
			for _, r := range records(t, p) {
				if r.Phase != mmapds.PhaseProfile {
					continue
				}
				s := sessions[r.Session]
				if s == nil {
					s = &session{start: -1}
					sessions[r.Session] = s
				}
				s.turns++
				if r.Turn == 0 {
					s.start = r.SendOffsetNs
					start = min(start, r.SendOffsetNs)
				}
			}
			byUser := make([][]*session, users)
			for _, s := range sessions {
				if s.start < 0 {
					t.Fatal("a profile session without its first turn")
				}
				u := mmapds.UserOf(s.start, start, users, rate)
				byUser[u] = append(byUser[u], s)
			}
			gap := float64(users) / rate
			near := func(got int64, sec float64) bool { return math.Abs(float64(got-start)-sec*1e9) <= 2 }
			for u, ss := range byUser {
				if len(ss) == 0 {
					t.Fatalf("user %d has no session", u)
				}
				sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
				at := float64(u) / rate
				for i, s := range ss {
					if !near(s.start, at) {
						t.Fatalf("user %d's session %d enters at %d ns after the start, want %.0f", u, i, s.start-start, at*1e9)
					}
					at += float64(s.turns) * gap
				}
			}
		})
	}
}
