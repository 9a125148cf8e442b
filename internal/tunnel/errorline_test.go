package tunnel

import "testing"

// TestErrorLine: a line is the last error only when it is one; a warning
// whose message says something "failed" is not (it showed as "Last
// error" under State: Ready).
func TestErrorLine(t *testing.T) {
	for line, want := range map[string]bool{
		`{"time":"2026-12-03T10:00:00Z","level":"WARN","msg":"OAuth discovery failed","err":"404"}`: false,
		`time=2026-12-03T10:00:00Z level=WARN msg="discovery failed"`:                               false,
		`{"level":"INFO","msg":"poll failed once, retrying"}`:                                       false,
		`{"level":"ERROR","msg":"control plane refused key"}`:                                       true,
		`time=2026-12-03T10:00:00Z level=ERROR msg="listen failed"`:                                 true,
		`error: control plane refused key`:                                                          true,
		`panic: runtime error`:                                                                      true,
		`connected`:                                                                                 false,
	} {
		if got := errorLine(line); got != want {
			t.Errorf("errorLine(%s) = %v, want %v", line, got, want)
		}
	}
}
