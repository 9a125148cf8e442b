//go:build !windows

package govern_test

import "github.com/hearth-dev/hearth/internal/govern"

type govRule struct{ program, root string }

func (r govRule) rule() *govern.Rule { return &govern.Rule{Program: r.program, CwdRoot: r.root} }
