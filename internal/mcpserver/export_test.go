package mcpserver

import "net/http"

// SDKOnlyHandler is s's HTTP surface without the fast path: every request
// reaches the go-sdk. The differential tests compare the two.
func SDKOnlyHandler(s *Server) http.Handler { return s.handler(false) }

// FastCalls is how many requests s's fast path has answered.
func FastCalls(s *Server) int64 { return s.fastCalls.Load() }
