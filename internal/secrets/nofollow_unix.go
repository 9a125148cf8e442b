//go:build unix

package secrets

import "syscall"

// noFollow makes opening a secret file fail on a symlink, so a planted link
// cannot redirect reads elsewhere.
const noFollow = syscall.O_NOFOLLOW
