package soak

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"
)

// stallBodies opens n connections that each declare a body of size bytes,
// send all but the last 100 KiB of it, and stop. It returns once every
// connection has sent what it will (or its writes were refused), with a
// function that closes them all.
func stallBodies(mcpURL string, n int, size int64) (refused int, closeAll func(), err error) {
	u, err := url.Parse(mcpURL)
	if err != nil {
		return 0, nil, err
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", u.Path, u.Host, size)
	send := size - 100<<10
	chunk := bytes.Repeat([]byte(" "), 64<<10)
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	for range n {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return 0, nil, fmt.Errorf("open stalled connection: %w", err)
		}
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A refused body (503 at once) stops being read: the writes
			// then block or fail, and the connection is counted refused.
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := c.Write([]byte(head)); err != nil {
				mu.Lock()
				refused++
				mu.Unlock()
				return
			}
			for sent := int64(0); sent < send; {
				k := min(int64(len(chunk)), send-sent)
				if _, err := c.Write(chunk[:k]); err != nil {
					mu.Lock()
					refused++
					mu.Unlock()
					return
				}
				sent += k
			}
		}()
	}
	wg.Wait()
	return refused, func() {
		for _, c := range conns {
			c.Close()
		}
	}, nil
}
