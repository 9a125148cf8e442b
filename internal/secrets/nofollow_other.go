//go:build !unix && !windows

package secrets

const noFollow = 0
