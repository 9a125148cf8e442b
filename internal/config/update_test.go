package config

import (
	"errors"
	"strings"
	"testing"
)

// TestUpdateKeys: update.check is on by default and stays on in a config
// that sets only another update key; update.url takes https, or http to
// this computer only; an unknown update key and a bad address are refused
// naming the key.
func TestUpdateKeys(t *testing.T) {
	if d := Default().Update; !d.Check || d.Auto || d.URL != "" {
		t.Fatalf("defaults: %+v", d)
	}
	c, err := Parse("c", []byte(`{"update": {"auto": true}}`))
	if err != nil || !c.Update.Check || !c.Update.Auto {
		t.Fatalf("partial block: %+v, %v", c.Update, err)
	}
	for _, ok := range []string{"https://example.org/hearth/stable.json", "http://127.0.0.1:8080/m", "http://localhost/m", "http://[::1]:9/m"} {
		if _, err := Parse("c", []byte(`{"update": {"url": "`+ok+`"}}`)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.org/m", "ftp://example.org/m", "example.org/m", "https://"} {
		_, err := Parse("c", []byte(`{"update": {"url": "`+bad+`"}}`))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "update.url" {
			t.Errorf("%s: %v", bad, err)
		}
	}
	_, err = Parse("c", []byte(`{"update": {"chek": false}}`))
	if err == nil || !strings.Contains(err.Error(), `"update.chek"`) {
		t.Fatalf("unknown key: %v", err)
	}
	c, err = Parse("c", []byte(`{"update": {"check": false}}`))
	if err != nil || c.Update.Check {
		t.Fatalf("check off: %+v, %v", c.Update, err)
	}
}
