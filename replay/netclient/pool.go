package netclient

import (
	"sync"

	"github.com/llmbench/llmbench/replay/http1"
)

// pool keeps idle keep-alive connections per target. Connections are taken LIFO so the
// warmest one is reused.
type pool struct {
	mu   sync.Mutex
	idle [][]*http1.NetConn
	// closed, when set, is told of each idle connection get found closed (or sent to)
	// by the server: what teaches a URL's connection policy (http1.ConnPolicy).
	closed func(*http1.NetConn)
}

// get takes the warmest idle connection to target that nothing came on while it was idle
// (unsolicited: those are closed), or nil.
func (p *pool) get(target int) *http1.NetConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		s := p.idle[target]
		if len(s) == 0 {
			return nil
		}
		c := s[len(s)-1]
		s[len(s)-1] = nil
		p.idle[target] = s[:len(s)-1]
		if !c.Unsolicited() {
			return c
		}
		c.NC.Close()
		if p.closed != nil {
			p.closed(c)
		}
	}
}

func (p *pool) put(c *http1.NetConn) {
	p.mu.Lock()
	p.idle[c.Target] = append(p.idle[c.Target], c)
	p.mu.Unlock()
}

// drop closes the idle connections to target.
func (p *pool) drop(target int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.idle[target] {
		c.NC.Close()
		p.idle[target][i] = nil
	}
	p.idle[target] = p.idle[target][:0]
}

func (p *pool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.idle {
		for _, c := range s {
			c.NC.Close()
		}
		p.idle[i] = nil
	}
}
