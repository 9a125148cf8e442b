package fsops

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// systemError says in Hearth's words what the operating system refused
// about a path, naming the path, for op (fs.<op>). The system's own text
// ("open /x: no such file or directory", "The system cannot find the
// file specified.") is kept only in details.system_error: a model acts
// on the message, and Go's or Windows' phrasing tells it nothing in
// Hearth's terms. An error that carries nothing of the system's is
// Hearth's own and answers as it is.
func systemError(op string, err error) *primitive.Error {
	path := "the path"
	var pe *fs.PathError
	var le *os.LinkError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pe):
		if pe.Path != "" {
			path = `"` + pe.Path + `"`
		}
	case errors.As(err, &le):
		path = `"` + le.New + `"`
	case !errors.As(err, &errno) && !errors.Is(err, fs.ErrNotExist):
		// Not the system's: Hearth's own words, as they are.
		return primitive.Failed("fs_error", "fs.%s failed: %v", op, err)
	}
	var e *primitive.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e = primitive.Failed("not_found", "fs.%s: %s does not exist (or a directory on the way to it does not)", op, path)
	case errors.Is(err, syscall.ENOTDIR):
		e = primitive.Failed("not_found", "fs.%s: a part of %s that should be a directory is a file", op, path)
	case errors.Is(err, syscall.EISDIR):
		e = primitive.Failed("is_directory", "fs.%s: %s is a directory; this operation needs a file", op, path)
	case errors.Is(err, fs.ErrPermission):
		e = primitive.Failed("access_denied", "fs.%s: this account may not access %s (the system refused)", op, path)
	case errors.Is(err, fs.ErrExist):
		e = primitive.Failed("exists", "fs.%s: %s already exists", op, path)
	case errors.Is(err, syscall.ENOSPC):
		e = primitive.Failed("disk_full", "fs.%s: the disk holding %s is full", op, path)
	default:
		e = primitive.Failed("fs_error", "fs.%s: the system could not complete it on %s; details.system_error has its reason", op, path)
	}
	return e.WithDetails(map[string]any{"system_error": err.Error()})
}

// base64Problem says where data is not valid standard base64, without
// Go's "illegal base64 data at input byte" phrasing.
func base64Problem(err error) string {
	var ce base64.CorruptInputError
	if errors.As(err, &ce) {
		return fmt.Sprintf("not valid standard base64 (A-Z a-z 0-9 + / with = padding): the first bad character is at byte %d", int64(ce))
	}
	return "not valid standard base64 (A-Z a-z 0-9 + / with = padding)"
}
