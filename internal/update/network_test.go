package update

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDownloadFromAServerThatNeverAnswers: a server that accepts the
// connection and never sends headers ends the download within the header
// timeout, said in plain words (not after the whole download's 30 minutes).
func TestDownloadFromAServerThatNeverAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	a := Artifact{URL: "http://" + ln.Addr().String() + "/hearth.zip", Size: 10, SHA256: strings.Repeat("ab", 32)}
	_, err = Download(context.Background(), &http.Client{}, a, t.TempDir(), "1.3.0",
		Limits{HeaderTimeout: 200 * time.Millisecond, DownloadTimeout: 10 * time.Minute}, nil)
	p, ok := err.(*Problem)
	if !ok || p.Plain != "The update server did not answer in time" || !strings.Contains(p.Detail, "no answer within 200ms") {
		t.Fatalf("download: %v", err)
	}
}

// redirectedRelease is a release whose manifest address answers with a
// redirect to target; the HTTP client reaches "updates.example" (another
// host) at a second loopback server, through its dialer, never elsewhere.
func redirectedRelease(t *testing.T, target func(other string) string) (*release, *Service, *httptest.Server) {
	t.Helper()
	r := newRelease(t)
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.requests = append(r.requests, req.Clone(req.Context()))
		w.Write(r.manifest)
	}))
	t.Cleanup(other.Close)
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	r.onManifest = func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target("updates.example:"+port), http.StatusFound)
	}
	dial := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, p, _ := net.SplitHostPort(addr)
		if host == "updates.example" {
			addr = net.JoinHostPort("127.0.0.1", p)
		} else if !IsLoopback(host) {
			t.Errorf("dialed %s", addr)
			return nil, net.UnknownNetworkError("not in a test")
		}
		return dial.DialContext(ctx, network, addr)
	}}}
	s := New(Options{Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, DataDir: t.TempDir(), Client: client,
		Limits: Limits{ManifestTimeout: 5 * time.Second}})
	return r, s, other
}

// TestRedirectToAnotherHostOverHTTPRefused: a redirect from the update
// address to plain http on another host is not followed, and nothing is
// offered.
func TestRedirectToAnotherHostOverHTTPRefused(t *testing.T) {
	r, s, _ := redirectedRelease(t, func(other string) string { return "http://" + other + "/manifest" })
	s.Check(context.Background())
	st := s.State()
	if st.Offer != nil || st.Problem == nil || !strings.Contains(st.Problem.Plain, "not https") {
		t.Fatalf("state: %+v (problem %+v)", st, st.Problem)
	}
	for _, req := range r.requests {
		if req.Host != r.srv.Listener.Addr().String() {
			t.Fatalf("the other host was asked: %s", req.Host)
		}
	}
}

// TestRedirectCarriesNoReferer: a redirect Hearth follows (on this
// computer, as the update address is) carries no Referer.
func TestRedirectCarriesNoReferer(t *testing.T) {
	r := newRelease(t)
	r.publish(t, "1.4.0", "1.0.0", map[string][]byte{ProgramName(): program})
	manifest := r.manifest
	r.onManifest = func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Query().Get("moved") == "" {
			http.Redirect(w, req, "/manifest?moved=1", http.StatusFound)
			return
		}
		w.Write(manifest)
	}
	s := New(Options{Version: "1.3.0", URL: r.url(), Key: r.vkey, Check: true, DataDir: t.TempDir()})
	s.Check(context.Background())
	if st := s.State(); st.Offer == nil {
		t.Fatalf("the loopback redirect was not followed: %+v", st.Problem)
	}
	if len(r.requests) != 2 {
		t.Fatalf("%d requests", len(r.requests))
	}
	if ref := r.requests[1].Header.Get("Referer"); ref != "" {
		t.Fatalf("Referer %q", ref)
	}
}

// TestPackageOverPlainHTTPToAnotherHostRefused: a signed manifest whose
// package is on another host over plain http is refused (https, or plain
// http only on this computer).
func TestPackageOverPlainHTTPToAnotherHostRefused(t *testing.T) {
	m := sampleManifest()
	a := m.Platforms[Platform()]
	a.URL = "http://updates.example/hearth.zip"
	m.Platforms[Platform()] = a
	if err := m.Check(); err == nil || !strings.Contains(err.Error(), "not an https address") {
		t.Fatalf("check: %v", err)
	}
	a.URL = "http://127.0.0.1:8080/hearth.zip"
	m.Platforms[Platform()] = a
	if err := m.Check(); err != nil {
		t.Fatalf("loopback: %v", err)
	}
}

// TestSignRefusesWhatHearthRefuses: a manifest whose signed text would be
// over MaxManifestBytes is not signed.
func TestSignRefusesWhatHearthRefuses(t *testing.T) {
	skey, _ := testKey(t)
	m := sampleManifest()
	m.Changes = strings.Repeat("Many changes. ", MaxManifestBytes/14+1)
	if _, err := SignManifest(m, skey); err == nil || !strings.Contains(err.Error(), "over the 65536") {
		t.Fatalf("sign: %v", err)
	}
}
