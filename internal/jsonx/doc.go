// Package jsonx holds Hearth's JSON byte helpers: rewriting decoded JSON
// trees by position (tree.go); reading JSON text without decoding it,
// where a value ends and an object's members (read.go); one pass over a
// body that checks its grammar, depth and strings as json.Valid would
// (scan.go); and writing what encoding/json's Marshal writes, byte for
// byte, without its reflection (encode.go). Each is held to encoding/json
// by its tests.
package jsonx
