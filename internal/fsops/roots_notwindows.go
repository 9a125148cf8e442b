//go:build !windows

package fsops

import "errors"

// pathFold: names compare byte for byte.
const pathFold = false

// platformPathProblem has nothing to add off Windows: any byte but NUL and
// '/' may appear in a name, and real-path resolution does the rest.
func platformPathProblem(string) (Rule, string) { return "", "" }

// hasShortNames: there are no 8.3 short names off Windows.
const hasShortNames = false

func longPathName(string) (string, error) { return "", errors.ErrUnsupported }
