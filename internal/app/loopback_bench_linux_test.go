package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

const hostInfoRequest = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"},"_meta":{"hearth/conversation":"bench"}}}`

// BenchmarkRoundTripSameUser is a machine.host_info round trip on one
// kept-alive connection to the real MCP listener, with the same-user
// check on (the default) and off, side by side: a kept-alive connection
// pays the owner lookup once, so the two must not differ per request.
//
//	go test -run '^$' -bench RoundTripSameUser -count 6 ./internal/app/ | benchstat -col /loopback_same_user -
func BenchmarkRoundTripSameUser(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "loopback_same_user=false"
		if on {
			name = "loopback_same_user=true"
		}
		b.Run(name, func(b *testing.B) {
			in := hearthtest.Start(b, func(c *config.Config) { c.LoopbackSameUser = on })
			client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			call := func() {
				req, err := http.NewRequest("POST", in.App.MCPURL(), strings.NewReader(hostInfoRequest))
				if err != nil {
					b.Fatal(err)
				}
				for _, h := range mcpHeaders {
					k, v, _ := strings.Cut(h, "=")
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("host_info: status %d, %v", resp.StatusCode, err)
				}
			}
			call()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
}
