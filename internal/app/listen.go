package app

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// AddrMove is a listener that Listen bound on another port than the
// configured one, because another program held that one.
type AddrMove struct {
	// Key is the config key, mcp_addr or panel_addr.
	Key string
	// Configured is the address config.json named; Bound is the address
	// Hearth listens on instead (same host, a free port).
	Configured, Bound string
	// Cause is the error binding Configured gave.
	Cause string
	// Saved: Bound was written to config.json, so the next start uses it
	// too (and the tunnel profile made for it stays valid); SaveErr says
	// why not otherwise.
	Saved   bool
	SaveErr string
}

// What names the listener in plain words.
func (m AddrMove) What() string {
	if m.Key == "panel_addr" {
		return "the control panel"
	}
	return "the MCP endpoint (what ChatGPT and other AI apps connect to)"
}

// Sentence says in plain words which port Hearth uses and why.
func (m AddrMove) Sentence() string {
	s := fmt.Sprintf("Port %s was in use by another program, so %s now uses port %s", portOf(m.Configured), m.What(), portOf(m.Bound))
	if m.Saved {
		return s + " (saved in config.json for the next starts)."
	}
	return s + " for this run only: it could not be saved in config.json (" + m.SaveErr + ")."
}

// PortTakenError is Listen's answer when an address given on the command
// line (--mcp-addr, --panel-addr) is taken: the user chose that port, so
// Hearth does not quietly pick another.
type PortTakenError struct {
	Flag, Addr string
	Err        error
}

func (e *PortTakenError) Error() string {
	return fmt.Sprintf("port %s is in use by another program. %s %s was given on the command line, so Hearth does not choose another port: stop that program, give another port, or leave %s out (then Hearth moves to a free port by itself) (%v)",
		portOf(e.Addr), e.Flag, e.Addr, e.Flag, e.Err)
}

func (e *PortTakenError) Unwrap() error { return e.Err }

// Listen binds both loopback listeners, each serving only the account
// Hearth runs as unless loopback_same_user is false (loopback.go).
//
// A configured port another program holds (a development server on 3000
// is common) does not stop Hearth: the listener moves to a free port the
// system picks on the same host, the new address is written back to
// config.json (config.SetStrings: only that key changes) so that the
// tunnel profile made for it stays valid across restarts, and AddrMoves
// says so for the Status page and serve's output. An address given on the
// command line (Options.MCPAddr, Options.PanelAddr: --mcp-addr,
// --panel-addr) is the user's explicit choice: taken, it fails with a
// *PortTakenError instead. Another Hearth of the same user and data
// directory never gets here: Start's instance lock answers it first
// (instance.ErrAlreadyRunning), and the second start opens the first
// one's panel as before.
func (a *App) Listen() error {
	mcp, mcpMove, err := bindLoopback("mcp_addr", a.Config.MCPAddr, a.explicitMCP, "--mcp-addr")
	if err != nil {
		return err
	}
	panel, panelMove, err := bindLoopback("panel_addr", a.Config.PanelAddr, a.explicitPanel, "--panel-addr")
	if err != nil {
		mcp.Close()
		return err
	}
	a.mcpLn, a.panelLn = mcp, panel
	if err := a.guardListeners(); err != nil {
		a.mcpLn.Close()
		a.panelLn.Close()
		return err
	}
	var moves []AddrMove
	for _, m := range []*AddrMove{mcpMove, panelMove} {
		if m != nil {
			moves = append(moves, *m)
		}
	}
	a.moves = a.saveMoves(moves)
	// ui.action refuses a browser window titled with the panel's address.
	a.UI.SetPanelAddr(a.panelLn.Addr().String())
	return nil
}

// AddrMoves are the listeners Listen moved off a taken port (none
// usually), each with its plain sentence.
func (a *App) AddrMoves() []AddrMove { return a.moves }

// bindLoopback listens on addr; when another program holds its port and
// the address is not the command line's, on a free port of the same host.
func bindLoopback(key, addr string, explicit bool, flag string) (net.Listener, *AddrMove, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil, nil
	}
	host, port, serr := net.SplitHostPort(addr)
	if !addrTaken(err) || serr != nil || port == "0" {
		return nil, nil, fmt.Errorf("listen on %s %s: %w", key, addr, err)
	}
	if explicit {
		return nil, nil, &PortTakenError{Flag: flag, Addr: addr, Err: err}
	}
	ln, ferr := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if ferr != nil {
		return nil, nil, fmt.Errorf("listen on %s %s: %w; and on a free port instead: %w", key, addr, err, ferr)
	}
	bound := net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	return ln, &AddrMove{Key: key, Configured: addr, Bound: bound, Cause: err.Error()}, nil
}

// saveMoves writes the moved addresses to config.json and into the
// running config; a failed write is logged and said in each move's
// sentence, and Hearth keeps serving on the moved port.
func (a *App) saveMoves(moves []AddrMove) []AddrMove {
	if len(moves) == 0 {
		return nil
	}
	set := map[string]string{}
	for _, m := range moves {
		set[m.Key] = m.Bound
		if m.Key == "mcp_addr" {
			a.Config.MCPAddr = m.Bound
		} else {
			a.Config.PanelAddr = m.Bound
		}
	}
	var err error
	if a.cfgFile == nil || a.cfgFile.path == "" {
		err = errors.New("no config file")
	} else {
		err = a.cfgFile.setStrings(set)
	}
	for i := range moves {
		moves[i].Saved = err == nil
		if err != nil {
			moves[i].SaveErr = err.Error()
		}
		a.Log.Warn(moves[i].Sentence(), "key", moves[i].Key, "configured", moves[i].Configured, "bound", moves[i].Bound, "cause", moves[i].Cause)
	}
	if err != nil {
		a.Log.Error("save the moved listen addresses in config.json", "err", err)
	}
	return moves
}

// portOf is addr's port ("3000" of "127.0.0.1:3000").
func portOf(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		return p
	}
	return addr
}
