package config

import (
	"errors"
	"strings"
	"testing"
)

// TestLoopbackSameUser: on by default (a config file without the key
// keeps it on), false is honoured, and a value that is not a boolean is
// refused naming the key.
func TestLoopbackSameUser(t *testing.T) {
	if !Default().LoopbackSameUser {
		t.Fatal("loopback_same_user must default to true")
	}
	c, err := Parse("c", []byte(`{"policy": {"mode": "ask"}}`))
	if err != nil || !c.LoopbackSameUser {
		t.Fatalf("a config without the key: %v, %v", c.LoopbackSameUser, err)
	}
	c, err = Parse("c", []byte(`{"loopback_same_user": false}`))
	if err != nil || c.LoopbackSameUser {
		t.Fatalf("false: %v, %v", c.LoopbackSameUser, err)
	}
	_, err = Parse("config.json", []byte(`{"loopback_same_user": "no"}`))
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"loopback_same_user"`) {
		t.Fatalf("a string: %v", err)
	}
}
