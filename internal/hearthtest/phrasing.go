package hearthtest

import (
	"regexp"
	"strings"
)

// goPhrases are the marks of text that Go or the operating system wrote
// rather than Hearth: a model reads an error's message, and
// `exec: "x": executable file not found in $PATH` or `open C:\x: The
// system cannot find the file specified.` tells it nothing it can act on
// in Hearth's terms. Each is matched case-sensitively as written.
var goPhrases = []string{
	"fork/exec", "$PATH", "%PATH%", "errno", "syscall", "%!", "<nil>",
	": no such file", "no such file or directory", ": not a directory", ": is a directory",
	"permission denied", "file exists", "directory not empty", "bad file descriptor",
	"executable file not found", "exec format error", "operation not permitted",
	"The system cannot find", "Access is denied", "The process cannot access",
	"is not a valid Win32 application", "The filename, directory name",
	"context deadline exceeded", "context canceled",
	"invalid character", "json: ", "unexpected end of JSON input", "cannot unmarshal",
	"error parsing regexp", "parsing time ", "strconv.", "invalid syntax",
	"sql: ", "SQLITE_", "database is locked", "constraint failed",
	"illegal base64 data", "goroutine ", "panic: ", "runtime error", "nil pointer", "use of closed",
	"i/o timeout", "connection refused", "broken pipe", "EOF",
}

// goOps are the prefixes of Go packages' errors ("exec: ", "os: ", but not
// Hearth's "machine.exec: ")
// and the operation words Go's *PathError and *LinkError put before a
// path ("open /x: ..."), matched with the colon after the path, so a
// Hearth sentence such as "an open UNKNOWN blocks" is not one.
var goOps = regexp.MustCompile(`(?:^|[\s(])(?:exec|os|base64|strconv|url|x509|tls|net|http): |(?:^|[\s(])(?:open|stat|lstat|read|write|readdir|readdirent|readlink|rename|remove|unlinkat|mkdir|chdir|chmod|symlink|link|truncate|seek|close|fstat|getwd|CreateFile|GetFileAttributesEx|FindFirstFile) [^\s:]*[/\\][^\s]*: `)

// GoPhrasing returns the first mark of Go or operating-system text in msg
// ("" when there is none). Tests hold every message a tool answers to it.
func GoPhrasing(msg string) string {
	for _, p := range goPhrases {
		if strings.Contains(msg, p) {
			return p
		}
	}
	if m := goOps.FindString(msg); m != "" {
		return strings.TrimSpace(m)
	}
	return ""
}
