package config

import (
	"errors"
	"strings"
	"testing"
)

func TestBackupKeep(t *testing.T) {
	if d := Default(); d.BackupKeep != DefaultBackupKeep || DefaultBackupKeep != 7 {
		t.Fatalf("backup_keep default = %d, want 7", d.BackupKeep)
	}
	c, err := Parse("c", []byte(`{"backup_keep": 30}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.BackupKeep != 30 {
		t.Fatalf("backup_keep = %d, want 30", c.BackupKeep)
	}
	for _, js := range []string{`{"backup_keep": 0}`, `{"backup_keep": -1}`, `{"backup_keep": 1001}`, `{"backup_keep": "7"}`} {
		_, err := Parse("config.json", []byte(js))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"backup_keep"`) {
			t.Errorf("%s: error %v does not name backup_keep", js, err)
		}
	}
}
