package uia

import (
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Helpers for the package's own tests (provider_windows_test.go) and, by
// these exported names that exist only in tests, for its external tests
// (uia_test.go, which uses the fake provider of internal/uia/uiatest).

// Str returns a pointer to s.
func Str(s string) *string { return &s }

// Num returns a pointer to n.
func Num(n int) *int { return &n }

// Code returns err's state and code ("refused/…"), or says it is not a
// primitive error.
func Code(err error) string {
	var pe *primitive.Error
	if errors.As(err, &pe) {
		return pe.State + "/" + pe.Code
	}
	return fmt.Sprintf("not a primitive error: %v", err)
}

var str, num, code = Str, Num, Code
