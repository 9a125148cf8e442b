package wake

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxMessage bounds one CDP message read from the browser. Hearth only
// asks for target lists and small script results, so a larger message is
// a fault, not data.
const maxMessage = 32 << 20

// errClosed is returned by calls on a connection whose browser has gone.
var errClosed = errors.New("browser connection closed")

// cdpError is an error answer of the browser.
type cdpError struct {
	Method  string
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *cdpError) Error() string {
	return fmt.Sprintf("cdp %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// cdpEvent is an event the browser sent without being asked.
type cdpEvent struct {
	Method    string
	SessionID string
	Params    json.RawMessage
}

// Conn is a Chrome DevTools Protocol connection over the browser's
// --remote-debugging-pipe: commands go to the browser's descriptor 3 and
// answers and events come from its descriptor 4, each message one JSON
// object followed by a NUL byte. Sessions are flat (Target.attachToTarget
// with flatten), so one connection reaches every page.
type Conn struct {
	w io.WriteCloser

	wmu sync.Mutex // serializes writes

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan reply
	err     error // set once the reader ends
	events  func(cdpEvent)
	done    chan struct{}
}

type reply struct {
	result json.RawMessage
	err    error
}

// newConn starts reading r. events, when set, is called on the reader's
// goroutine for every event; it must not block.
func newConn(r io.Reader, w io.WriteCloser, events func(cdpEvent)) *Conn {
	c := &Conn{w: w, waiting: map[int64]chan reply{}, events: events, done: make(chan struct{})}
	go c.read(r)
	return c
}

// Done is closed when the browser's end of the pipe has closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var msg []byte
		msg, err = readMessage(br)
		if err != nil {
			break
		}
		var m struct {
			ID        int64           `json:"id"`
			Method    string          `json:"method"`
			SessionID string          `json:"sessionId"`
			Params    json.RawMessage `json:"params"`
			Result    json.RawMessage `json:"result"`
			Error     *cdpError       `json:"error"`
		}
		if jerr := json.Unmarshal(msg, &m); jerr != nil {
			err = fmt.Errorf("decode cdp message: %w", jerr)
			break
		}
		if m.ID == 0 {
			if m.Method != "" && c.events != nil {
				c.events(cdpEvent{Method: m.Method, SessionID: m.SessionID, Params: m.Params})
			}
			continue
		}
		c.mu.Lock()
		ch := c.waiting[m.ID]
		delete(c.waiting, m.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if m.Error != nil {
			ch <- reply{err: m.Error}
		} else {
			ch <- reply{result: m.Result}
		}
	}
	if errors.Is(err, io.EOF) {
		err = errClosed
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.waiting {
		ch <- reply{err: err}
		delete(c.waiting, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// readMessage reads one NUL-terminated message.
func readMessage(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice(0)
		buf = append(buf, chunk...)
		if len(buf) > maxMessage {
			return nil, fmt.Errorf("cdp message larger than %d bytes", maxMessage)
		}
		if err == nil {
			return buf[:len(buf)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > 0 && errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// Call sends method with params (nil for none) in session ("" for the
// browser itself) and decodes the result into out (nil to discard it).
func (c *Conn) Call(ctx context.Context, session, method string, params, out any) error {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("cdp %s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.waiting[id] = ch
	c.mu.Unlock()
	msg["id"] = id
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode cdp %s: %w", method, err)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return fmt.Errorf("encode cdp %s: a NUL byte in the message", method)
	}
	c.wmu.Lock()
	_, err = c.w.Write(append(b, 0))
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return fmt.Errorf("send cdp %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			var ce *cdpError
			if errors.As(r.err, &ce) {
				ce.Method = method
				return ce
			}
			return fmt.Errorf("cdp %s: %w", method, r.err)
		}
		if out != nil {
			if err := json.Unmarshal(r.result, out); err != nil {
				return fmt.Errorf("decode cdp %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("cdp %s: %w", method, ctx.Err())
	}
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// Close closes Hearth's end of the command pipe; the browser sees EOF.
func (c *Conn) Close() error { return c.w.Close() }
