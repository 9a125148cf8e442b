package update

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

var zeroTime time.Time

// release is a real HTTP update server on loopback, started by a test:
// it serves a signed manifest at /manifest and the package at
// /hearth.zip. Handlers can be replaced to misbehave.
type release struct {
	skey, vkey string
	srv        *httptest.Server

	mu       sync.Mutex
	manifest []byte
	pkg      []byte
	// requests are the requests the server saw (what Hearth sends).
	requests []*http.Request
	// onManifest and onPackage, when set, answer instead.
	onManifest, onPackage http.HandlerFunc
	// last is the newest published time signed: publish signs a later
	// one, as a Hearth takes a manifest only when it is newer.
	last time.Time
}

func newRelease(t testing.TB) *release {
	t.Helper()
	r := &release{}
	var err error
	if r.skey, r.vkey, err = GenerateKey("hearth-release-test"); err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Clone(req.Context()))
		manifest, pkg, onM, onP := r.manifest, r.pkg, r.onManifest, r.onPackage
		r.mu.Unlock()
		switch req.URL.Path {
		case "/manifest":
			if onM != nil {
				onM(w, req)
				return
			}
			w.Write(manifest)
		case "/hearth.zip":
			if onP != nil {
				onP(w, req)
				return
			}
			http.ServeContent(w, req, "hearth.zip", zeroTime, bytes.NewReader(pkg))
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// publish signs a manifest for version whose package for this platform
// holds the given files (name → content), with the tunnel-client listed
// when one is among them.
func (r *release) publish(t testing.TB, version, minVersion string, files map[string][]byte) Manifest {
	t.Helper()
	return r.publishAt(t, version, minVersion, files, time.Time{})
}

// publishAt is publish with the manifest's published time (zero: now,
// or a second after the last one signed).
func (r *release) publishAt(t testing.TB, version, minVersion string, files map[string][]byte, published time.Time) Manifest {
	t.Helper()
	pkg := zipOf(t, files)
	sum := sha256.Sum256(pkg)
	a := Artifact{URL: r.srv.URL + "/hearth.zip", Size: int64(len(pkg)), SHA256: hex.EncodeToString(sum[:])}
	if tc, ok := files[TunnelClientName()]; ok {
		tsum := sha256.Sum256(tc)
		a.TunnelClient = &TunnelClient{Version: "0.9.0", SHA256: hex.EncodeToString(tsum[:])}
	}
	r.mu.Lock()
	if published.IsZero() {
		published = time.Now().UTC().Truncate(time.Second)
		if !published.After(r.last) {
			published = r.last.Add(time.Second)
		}
	}
	if published.After(r.last) {
		r.last = published
	}
	r.mu.Unlock()
	m := Manifest{Version: version, MinVersion: minVersion, Changes: "Backups are faster.", Published: published, Platforms: map[string]Artifact{Platform(): a}}
	msg, err := SignManifest(m, r.skey)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.manifest, r.pkg = msg, pkg
	r.mu.Unlock()
	return m
}

func (r *release) url() string { return r.srv.URL + "/manifest" }

// zipOf stores files in a ZIP without compression (a test's programs are
// large and compressing them costs CPU for nothing).
func zipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
