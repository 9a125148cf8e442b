package uia

import (
	"errors"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// operatorSurface refuses any action on Hearth's own operator surfaces: an
// element of Hearth's process (the tray), or one inside a window or
// document showing the control panel. The model must never reach an
// operator decision (approve, reset, resume, policy) by driving the UI the
// operator uses — semantic actions need no permit, so this is a refusal,
// not a permit.
//
// The walk's own ancestors are not enough: a call scoped to an inner
// child window of a browser (its render widget, say) walks from that
// child and never sees the titled top-level window. So every window
// handle involved — the scope's and each ancestor's — is also resolved
// to its top-level window (GetAncestor(GA_ROOT)), whose title and owning
// process are checked too. A handle whose top-level window cannot be
// resolved is refused: what cannot be told apart from the panel is
// treated as the panel.
func (s *Service) operatorSurface(p Provider, in *Input, e *walked) error {
	self := os.Getpid()
	var hwnds []uint64
	if in.HWND != 0 {
		hwnds = append(hwnds, in.HWND)
	}
	for a := e; a != nil; a = a.parent {
		if a.props.ProcessID == self {
			return ownSurface(e.node.Locator)
		}
		if s.showsPanel(a.props.Name) {
			return panelSurface(e.node.Locator)
		}
		if a.props.HWND != 0 && !slices.Contains(hwnds, a.props.HWND) {
			hwnds = append(hwnds, a.props.HWND)
		}
	}
	for _, h := range hwnds {
		if err := s.checkWindow(p, e.node.Locator, h); err != nil {
			return err
		}
	}
	return nil
}

// checkWindow refuses what lies in window hwnd when its top-level window
// is an operator surface; what names the element in the refusal.
func (s *Service) checkWindow(p Provider, what string, hwnd uint64) error {
	w, err := p.TopLevel(hwnd)
	if errors.Is(err, ErrNotFound) {
		return primitive.Conflict("element_gone", "ui.action: window %d of %s vanished before its top-level window could be checked; nothing was done", hwnd, what)
	}
	if err != nil {
		return primitive.Blocked("operator_surface", "ui.action: cannot tell which top-level window %s lies in (window %d: %v), so it cannot be told apart from Hearth's operator surfaces; nothing was done", what, hwnd, err).
			WithDetails(map[string]any{"reason": "operator surface unknown", "hwnd": hwnd})
	}
	// The title first: it names the control panel, which is the more
	// useful refusal when both hold.
	if s.showsPanel(w.Title) {
		return panelSurface(what)
	}
	if w.ProcessID == os.Getpid() {
		return ownSurface(what)
	}
	return nil
}

func ownSurface(what string) error {
	return primitive.Blocked("operator_surface", "ui.action: %s belongs to Hearth itself; the model cannot drive Hearth's own UI", what).
		WithDetails(map[string]any{"reason": "operator surface"})
}

func panelSurface(what string) error {
	return primitive.Blocked("operator_surface", "ui.action: %s is inside the Hearth control panel; operator decisions are the operator's, never the model's", what).
		WithDetails(map[string]any{"reason": "operator surface"})
}

// SetPanelAddr tells the Service the control panel's listening address
// (host:port) once it is known. A browser shows the URL in its title while
// a panel page loads, before the page's <title> arrives, so a window or
// document name containing the address counts as the panel too.
func (s *Service) SetPanelAddr(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.panelAddr = addr
}

// ShowsPanel reports whether a window or document name is the control
// panel's (ui.screenshot treats such a window as Hearth's own).
func (s *Service) ShowsPanel(name string) bool { return s.showsPanel(name) }

// showsPanel reports whether a window or document name is the control
// panel's: it carries PanelTitle, or the panel's address (as given, or
// with localhost for a loopback host).
func (s *Service) showsPanel(name string) bool {
	if strings.Contains(name, PanelTitle) {
		return true
	}
	s.mu.Lock()
	addr := s.panelAddr
	s.mu.Unlock()
	if addr == "" {
		return false
	}
	if strings.Contains(name, addr) {
		return true
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
			if strings.Contains(strings.ToLower(name), h+":"+port) {
				return true
			}
		}
	}
	return false
}
