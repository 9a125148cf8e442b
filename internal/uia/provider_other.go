//go:build !windows

package uia

import "errors"

// DefaultProvider returns this host's UI Automation: none off Windows, so
// every ui call answers blocked with Unavailable (docs/DESIGN.md, "UI Automation").
func DefaultProvider() Provider { return noProvider{} }

// noProvider never opens; the Service reports its Open error on every call
// and never calls anything else.
type noProvider struct{}

var errNoUIA = errors.New(Unavailable)

func (noProvider) Open() error                            { return errNoUIA }
func (noProvider) Close()                                 {}
func (noProvider) InteractiveDesktop() error              { return errNoUIA }
func (noProvider) Roots(Scope) ([]Ref, error)             { return nil, errNoUIA }
func (noProvider) Children(Ref, int) ([]Ref, bool, error) { return nil, false, errNoUIA }
func (noProvider) Props(Ref) (Props, error)               { return Props{}, errNoUIA }
func (noProvider) Release(Ref)                            {}
func (noProvider) TopLevel(uint64) (Window, error)        { return Window{}, errNoUIA }
func (noProvider) Elevated(int) (bool, error)             { return false, errNoUIA }
func (noProvider) Invoke(Ref) error                       { return errNoUIA }
func (noProvider) Focus(Ref) error                        { return errNoUIA }
func (noProvider) SetValue(Ref, string) error             { return errNoUIA }
func (noProvider) Click(Scope, Ref) error                 { return errNoUIA }
func (noProvider) Key(Scope, Ref, uint16) error           { return errNoUIA }
