package s3test

import (
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"
)

// A link stands between clients and a server the way a network path to a
// remote store does: what a client sends crosses at a fixed rate shared by
// all its connections, and every byte, either way, arrives a fixed delay
// after it was sent. It lets a benchmark on one machine see whether a
// writer keeps encoding while its uploads are on the wire, which a server
// on loopback (as fast as its CPU) cannot show.
type link struct {
	target string        // host:port of the server
	rate   float64       // bytes per second, client to server
	delay  time.Duration // one way
	ln     net.Listener

	mu    sync.Mutex
	next  time.Time // when the shared uplink is free
	conns map[net.Conn]struct{}
	done  bool
}

// linkChunk bounds the bytes read, paced and forwarded as one piece.
const linkChunk = 32 << 10

// Link starts a link to s and returns s as its clients see it through the
// link (the same bucket and credentials at another endpoint), and a stop
// that closes the link's listener and connections. rate is in bytes per
// second (client to server; the replies, small for uploads, only wait out
// the delay), delay is one way.
func (s *Server) Link(rate float64, delay time.Duration) (*Server, func() error, error) {
	if rate <= 0 || delay < 0 {
		return nil, nil, fmt.Errorf("s3test: link rate %v B/s, delay %v", rate, delay)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("s3test: endpoint %q: %w", s.Endpoint, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	l := &link{target: u.Host, rate: rate, delay: delay, ln: ln, conns: map[net.Conn]struct{}{}}
	go l.accept()
	through := *s
	through.Endpoint = "http://" + ln.Addr().String()
	return &through, l.stop, nil
}

func (l *link) stop() error {
	l.mu.Lock()
	l.done = true
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	err := l.ln.Close()
	for c := range conns {
		c.Close()
	}
	return err
}

// track records c for stop; it reports false once the link is stopped.
func (l *link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *link) accept() {
	for {
		client, err := l.ln.Accept()
		if err != nil {
			return // stopped
		}
		server, err := net.Dial("tcp", l.target)
		if err != nil {
			client.Close()
			continue
		}
		if !l.track(client) || !l.track(server) {
			client.Close()
			server.Close()
			return
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); l.carry(client, server, true) }()
		go func() { defer wg.Done(); l.carry(server, client, false) }()
		go func() {
			wg.Wait()
			client.Close()
			server.Close()
			l.mu.Lock()
			delete(l.conns, client)
			delete(l.conns, server)
			l.mu.Unlock()
		}()
	}
}

// piece is bytes read from one side (the first n of b), to be written to
// the other at due.
type piece struct {
	b   *[linkChunk]byte
	n   int
	due time.Time
}

// linkBufs recycles the pieces' buffers: the link's own copying shares the
// cores with what a benchmark measures through it.
var linkBufs = sync.Pool{New: func() any { return new([linkChunk]byte) }}

// carry copies from src to dst, each piece delivered a delay after it was
// sent (and, uplink, after the shared rate let it through). When src ends,
// dst's write side is closed once everything read is delivered.
func (l *link) carry(src, dst net.Conn, uplink bool) {
	q := make(chan piece, 64)
	go func() {
		defer close(q)
		for {
			b := linkBufs.Get().(*[linkChunk]byte)
			n, err := src.Read(b[:])
			if n > 0 {
				q <- piece{b: b, n: n, due: l.due(n, uplink)}
			} else {
				linkBufs.Put(b)
			}
			if err != nil {
				return
			}
		}
	}()
	for p := range q {
		if d := time.Until(p.due); d > 0 {
			time.Sleep(d)
		}
		_, err := dst.Write(p.b[:p.n])
		linkBufs.Put(p.b)
		if err != nil {
			src.Close()
			for range q { // let the reader finish
			}
			break
		}
	}
	if hc, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
	} else {
		dst.Close()
	}
}

// due is when n bytes sent now arrive: uplink bytes wait for the shared
// rate's turn and take n/rate to send.
func (l *link) due(n int, uplink bool) time.Time {
	now := time.Now()
	if !uplink {
		return now.Add(l.delay)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.next
	if start.Before(now) {
		start = now
	}
	l.next = start.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	return l.next.Add(l.delay)
}
