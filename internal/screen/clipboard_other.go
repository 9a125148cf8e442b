//go:build !windows

package screen

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// The X11 CLIPBOARD selection, in pure Go. Reading asks the selection's
// owner to convert it to UTF8_STRING into a property of a window of
// Hearth's and reads that property. Setting makes Hearth the selection's
// owner: X keeps no clipboard content, so Hearth answers other clients'
// requests for it from a goroutine of its own, on a connection of its own,
// until another client takes the selection, HoldFor passes, or the Service
// closes; after that the clipboard is empty (as when any X program that
// copied exits). Transfers are whole (no INCR protocol): text is read up to
// what the owner sends at once, and set in pieces of one request each.

// HoldFor bounds how long Hearth keeps serving text it put on the X11
// clipboard.
const HoldFor = 30 * time.Minute

// replyWait bounds the wait for a selection owner's answer.
const replyWait = 3 * time.Second

// DefaultClipboard returns the X11 CLIPBOARD of $DISPLAY.
func DefaultClipboard(log *slog.Logger) Clipboard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &x11Clipboard{log: log, hold: HoldFor}
}

type x11Clipboard struct {
	log  *slog.Logger
	hold time.Duration

	mu    sync.Mutex
	owner *x11Owner
}

// x11Conn is one connection with a window of Hearth's and the atoms the
// selection protocol names.
type x11Conn struct {
	c                                    *xgb.Conn
	win                                  xproto.Window
	clipboard, utf8, targets, text, prop xproto.Atom
}

func openX11Conn() (*x11Conn, error) {
	name := os.Getenv("DISPLAY")
	if name == "" {
		return nil, fmt.Errorf("%w: DISPLAY is not set (no X11 session)", ErrNoDisplay)
	}
	c, err := xgb.NewConnDisplay(name)
	if err != nil {
		return nil, fmt.Errorf("%w: connect to X display %s: %v", ErrNoDisplay, name, err)
	}
	x := &x11Conn{c: c}
	for _, a := range []struct {
		name string
		to   *xproto.Atom
	}{{"CLIPBOARD", &x.clipboard}, {"UTF8_STRING", &x.utf8}, {"TARGETS", &x.targets}, {"TEXT", &x.text}, {"HEARTH_CLIPBOARD", &x.prop}} {
		if *a.to, err = internAtom(c, a.name); err != nil {
			c.Close()
			return nil, err
		}
	}
	screen := xproto.Setup(c).DefaultScreen(c)
	if x.win, err = xproto.NewWindowId(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("allocate an X window id: %w", err)
	}
	err = xproto.CreateWindowChecked(c, 0, x.win, screen.Root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, screen.RootVisual,
		xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("create Hearth's clipboard window: %w", err)
	}
	return x, nil
}

// waitEvent returns the next event, or an error after d (the connection
// is then closed, which ends the wait).
func (x *x11Conn) waitEvent(d time.Duration) (xgb.Event, error) {
	type ev struct {
		e   xgb.Event
		err xgb.Error
	}
	ch := make(chan ev, 1)
	go func() {
		e, err := x.c.WaitForEvent()
		ch <- ev{e, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.e == nil && r.err == nil {
			return nil, errors.New("the X connection closed")
		}
		if r.err != nil {
			return nil, fmt.Errorf("X error: %v", r.err)
		}
		return r.e, nil
	case <-t.C:
		x.c.Close()
		return nil, errors.New("the clipboard's owner did not answer in time")
	}
}

func (cb *x11Clipboard) Text(maxBytes int) (string, error) {
	x, err := openX11Conn()
	if err != nil {
		return "", err
	}
	defer x.c.Close()
	owner, err := xproto.GetSelectionOwner(x.c, x.clipboard).Reply()
	if err != nil {
		return "", fmt.Errorf("ask who owns the clipboard: %w", err)
	}
	if owner.Owner == xproto.WindowNone {
		return "", ErrNoText
	}
	xproto.ConvertSelection(x.c, x.win, x.clipboard, x.utf8, x.prop, xproto.TimeCurrentTime)
	deadline := time.Now().Add(replyWait)
	for {
		e, err := x.waitEvent(time.Until(deadline))
		if err != nil {
			return "", err
		}
		n, ok := e.(xproto.SelectionNotifyEvent)
		if !ok || n.Requestor != x.win {
			continue
		}
		if n.Property == xproto.AtomNone {
			return "", ErrNoText // the owner has no text form
		}
		break
	}
	// Ask for one byte more than the bound, to tell text at the bound
	// from text over it.
	r, err := xproto.GetProperty(x.c, true, x.win, x.prop, xproto.GetPropertyTypeAny, 0, uint32(maxBytes/4+1)).Reply()
	if err != nil {
		return "", fmt.Errorf("read the clipboard's text: %w", err)
	}
	if r.Type != x.utf8 && r.Type != xproto.AtomString || r.Format != 8 {
		return "", fmt.Errorf("the clipboard's owner sent its text in a form Hearth does not read (an incremental transfer of large text, or type %d)", r.Type)
	}
	if len(r.Value) > maxBytes || r.BytesAfter > 0 {
		return "", ErrTooLong
	}
	return string(r.Value), nil
}

func (cb *x11Clipboard) SetText(text string) error {
	x, err := openX11Conn()
	if err != nil {
		return err
	}
	xproto.SetSelectionOwner(x.c, x.win, x.clipboard, xproto.TimeCurrentTime)
	got, err := xproto.GetSelectionOwner(x.c, x.clipboard).Reply()
	if err != nil || got.Owner != x.win {
		x.c.Close()
		return fmt.Errorf("take the clipboard: the X server did not make Hearth its owner (%v)", err)
	}
	o := &x11Owner{x: x, text: []byte(text), done: make(chan struct{}), log: cb.log}
	cb.mu.Lock()
	prev := cb.owner
	cb.owner = o
	cb.mu.Unlock()
	if prev != nil {
		prev.stop()
	}
	go o.serve(cb.hold)
	return nil
}

func (cb *x11Clipboard) Close() {
	cb.mu.Lock()
	o := cb.owner
	cb.owner = nil
	cb.mu.Unlock()
	if o != nil {
		o.stop()
	}
}

// x11Owner serves the text Hearth put on the clipboard.
type x11Owner struct {
	x    *x11Conn
	text []byte
	log  *slog.Logger
	once sync.Once
	done chan struct{}
}

// stop ends the serving: closing the connection gives up the selection
// and ends the wait for the next request.
func (o *x11Owner) stop() {
	o.once.Do(func() {
		o.x.c.Close()
	})
	<-o.done
}

func (o *x11Owner) serve(hold time.Duration) {
	defer close(o.done)
	defer o.once.Do(func() { o.x.c.Close() })
	until := time.Now().Add(hold)
	for {
		left := time.Until(until)
		if left <= 0 {
			return
		}
		e, err := o.x.waitEvent(left)
		if err != nil {
			return
		}
		switch ev := e.(type) {
		case xproto.SelectionClearEvent:
			return // another client took the clipboard
		case xproto.SelectionRequestEvent:
			o.answer(ev)
		}
	}
}

// chunk bounds one ChangeProperty request's data (the core protocol's
// request size is 256 KiB).
const chunk = 64 << 10

// answer serves one request for the clipboard: its TARGETS, or its text as
// UTF8_STRING, STRING or TEXT, written in pieces to the requestor's
// property; anything else is refused (property None).
func (o *x11Owner) answer(ev xproto.SelectionRequestEvent) {
	x := o.x
	prop := ev.Property
	if prop == xproto.AtomNone {
		prop = ev.Target // an obsolete client
	}
	switch ev.Target {
	case x.targets:
		atoms := []xproto.Atom{x.targets, x.utf8, xproto.AtomString, x.text}
		buf := make([]byte, 4*len(atoms))
		for i, a := range atoms {
			xgb.Put32(buf[4*i:], uint32(a))
		}
		xproto.ChangeProperty(x.c, xproto.PropModeReplace, ev.Requestor, prop, xproto.AtomAtom, 32, uint32(len(atoms)), buf)
	case x.utf8, xproto.AtomString, x.text:
		typ := x.utf8
		if ev.Target == xproto.AtomString {
			typ = xproto.AtomString
		}
		mode := byte(xproto.PropModeReplace)
		for off := 0; off == 0 || off < len(o.text); off += chunk {
			part := o.text[off:min(off+chunk, len(o.text))]
			xproto.ChangeProperty(x.c, mode, ev.Requestor, prop, typ, 8, uint32(len(part)), part)
			mode = xproto.PropModeAppend
		}
	default:
		prop = xproto.AtomNone
	}
	n := xproto.SelectionNotifyEvent{Time: ev.Time, Requestor: ev.Requestor, Selection: ev.Selection, Target: ev.Target, Property: prop}
	if err := xproto.SendEventChecked(x.c, false, ev.Requestor, 0, string(n.Bytes())).Check(); err != nil {
		o.log.Debug("answer a clipboard request", "err", err)
	}
}
