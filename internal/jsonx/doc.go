// Package jsonx holds Hearth's JSON byte helpers: rewriting decoded JSON
// trees by position (tree.go), reading JSON text without decoding it
// (where a value ends, an object's members), and writing what
// encoding/json's Marshal writes, byte for byte, without its reflection.
// Each keeps its own tests against encoding/json.
package jsonx
