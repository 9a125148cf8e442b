package update

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// MaxPackageBytes bounds a package a manifest may announce.
const MaxPackageBytes = 512 << 20

// Limits bound the network side of an update; the zero value of a field
// means its default.
type Limits struct {
	// ManifestTimeout bounds reading the manifest (default 30 s).
	ManifestTimeout time.Duration
	// DownloadTimeout bounds the whole download (default 30 min).
	DownloadTimeout time.Duration
	// StallTimeout ends a download that receives nothing for this long
	// (default 60 s).
	StallTimeout time.Duration
	// HeaderTimeout bounds a download's connection and the server's
	// answer up to its headers (default 30 s); the stall timer runs from
	// the first byte of the body. Without it a server that accepts and
	// never answers would hold the download for DownloadTimeout.
	HeaderTimeout time.Duration
}

func (l Limits) manifest() time.Duration { return orDefault(l.ManifestTimeout, 30*time.Second) }
func (l Limits) download() time.Duration { return orDefault(l.DownloadTimeout, 30*time.Minute) }
func (l Limits) stall() time.Duration    { return orDefault(l.StallTimeout, 60*time.Second) }
func (l Limits) header() time.Duration   { return orDefault(l.HeaderTimeout, 30*time.Second) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Problem is why a check or an update did not happen, in the plain words
// the Status page shows, with the technical detail behind "Details".
type Problem struct {
	Plain  string
	Detail string
}

func (p *Problem) Error() string { return p.Plain + ": " + p.Detail }

func problem(plain string, err error) *Problem {
	return &Problem{Plain: plain, Detail: err.Error()}
}

// userAgent is all a request says about who asks: the version and the
// platform, nothing of the person or the PC.
func userAgent(version string) string { return "Hearth/" + Display(version) + " (" + Platform() + ")" }

// errRedirect is a redirect Hearth does not follow.
var errRedirect = errors.New("redirect refused")

// guarded is client with Hearth's redirect rule: a redirect is followed
// only to https, or to plain http on this computer when loopback (the
// manifest's own address is on this computer: a test or a local mirror);
// at most 5 of them; and without the Referer Go would add, so the next
// server learns nothing of the previous address.
func guarded(client *http.Client, loopback bool) *http.Client {
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		req.Header.Del("Referer")
		if len(via) > 5 {
			return fmt.Errorf("%w: more than 5 redirects", errRedirect)
		}
		u := req.URL
		if u.Scheme == "https" || (loopback && u.Scheme == "http" && IsLoopback(u.Hostname())) {
			return nil
		}
		return fmt.Errorf("%w: to %s (only https is followed)", errRedirect, u.Redacted())
	}
	return &c
}

// loopbackURL reports whether u names this computer.
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && IsLoopback(p.Hostname())
}

// newRequest is a GET carrying nothing but the User-Agent: no cookie,
// no identifier, no query added.
func newRequest(ctx context.Context, u, version string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent(version))
	return req, nil
}

// FetchManifest reads the signed manifest at u (within MaxManifestBytes
// and the manifest timeout, following only the redirects guarded allows)
// and verifies it with vkey. It returns the manifest and its signed text.
func FetchManifest(ctx context.Context, client *http.Client, u, vkey, version string, lim Limits) (Manifest, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.manifest())
	defer cancel()
	req, err := newRequest(ctx, u, version)
	if err != nil {
		return Manifest{}, nil, problem("The update address is not valid", err)
	}
	resp, err := guarded(client, loopbackURL(u)).Do(req)
	if err != nil {
		switch {
		case errors.Is(err, errRedirect):
			return Manifest{}, nil, problem("The update server sent Hearth to an address that is not https, so Hearth did not follow it", err)
		case ctx.Err() != nil:
			return Manifest{}, nil, problem("The update server did not answer in time", err)
		}
		return Manifest{}, nil, problem("Hearth could not reach the update server", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Manifest{}, nil, problem("The update server answered with an error", fmt.Errorf("GET %s: %s", u, resp.Status))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxManifestBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return Manifest{}, nil, problem("The update server did not answer in time", err)
		}
		return Manifest{}, nil, problem("Hearth could not read the update information", err)
	}
	if len(b) > MaxManifestBytes {
		return Manifest{}, nil, problem("The update information is too large", fmt.Errorf("GET %s: more than %d bytes", u, MaxManifestBytes))
	}
	m, err := openManifest(b, vkey)
	if err != nil {
		return Manifest{}, nil, err
	}
	return m, b, nil
}

// openManifest is OpenManifest with the refusal in plain words.
func openManifest(b []byte, vkey string) (Manifest, error) {
	m, err := OpenManifest(b, vkey)
	if errors.Is(err, ErrSignature) {
		return Manifest{}, problem("The update information is not signed by Hearth's release key, so Hearth ignored it", err)
	}
	if err != nil {
		return Manifest{}, problem("The update information is not in a form Hearth reads", err)
	}
	return m, nil
}

// Progress counts a download's bytes, for the progress bar.
type Progress struct {
	done  atomic.Int64
	total atomic.Int64
}

// Load returns the bytes received and expected.
func (p *Progress) Load() (done, total int64) {
	if p == nil {
		return 0, 0
	}
	return p.done.Load(), p.total.Load()
}

// Download fetches a's package into a new file in dir and checks its size
// and SHA-256 against the signed manifest. It reads at most a.Size+1
// bytes, ends within the download timeout and when nothing arrives for
// the stall timeout, and removes what it wrote on any failure. It returns
// the file's path.
//
// The connection and the answer's headers must come within the header
// timeout; then the stall timer runs. Redirects follow guarded's rule
// (plain http only when the package's own address is on this computer).
func Download(ctx context.Context, client *http.Client, a Artifact, dir, version string, lim Limits, prog *Progress) (string, error) {
	if prog == nil {
		prog = new(Progress)
	}
	prog.total.Store(a.Size)
	prog.done.Store(0)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", problem("Hearth could not make room for the update", err)
	}
	ctx, cancel := context.WithTimeout(ctx, lim.download())
	defer cancel()
	req, err := newRequest(ctx, a.URL, version)
	if err != nil {
		return "", problem("The update's address is not valid", err)
	}
	var noAnswer atomic.Bool
	headers := time.AfterFunc(lim.header(), func() { noAnswer.Store(true); cancel() })
	resp, err := guarded(client, loopbackURL(a.URL)).Do(req)
	headers.Stop()
	if err != nil {
		switch {
		case errors.Is(err, errRedirect):
			return "", problem("The update server sent Hearth to an address that is not https, so Hearth did not follow it", err)
		case noAnswer.Load():
			return "", problem("The update server did not answer in time", fmt.Errorf("GET %s: no answer within %s: %w", a.URL, lim.header(), err))
		}
		return "", problem("Hearth could not download the update", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", problem("The update server answered with an error", fmt.Errorf("GET %s: %s", a.URL, resp.Status))
	}
	if resp.ContentLength >= 0 && resp.ContentLength != a.Size {
		return "", problem("The download is not the size the signed release says", fmt.Errorf("GET %s: Content-Length %d, manifest size %d", a.URL, resp.ContentLength, a.Size))
	}
	f, err := os.CreateTemp(dir, "download-*.zip")
	if err != nil {
		return "", problem("Hearth could not make room for the update", err)
	}
	path := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(path)
		}
	}()
	// The stall timer: every read that returns bytes pushes it back.
	stall := time.AfterFunc(lim.stall(), cancel)
	defer stall.Stop()
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			stall.Reset(lim.stall())
			n += int64(k)
			if n > a.Size {
				return "", problem("The download is larger than the signed release says", fmt.Errorf("GET %s: more than %d bytes", a.URL, a.Size))
			}
			h.Write(buf[:k])
			if _, err := f.Write(buf[:k]); err != nil {
				return "", problem("Hearth could not save the update", err)
			}
			prog.done.Store(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return "", problem("The download stopped: the update server was too slow", fmt.Errorf("GET %s after %d of %d bytes: %w", a.URL, n, a.Size, rerr))
			}
			return "", problem("The download was cut off", fmt.Errorf("GET %s after %d of %d bytes: %w", a.URL, n, a.Size, rerr))
		}
	}
	if n != a.Size {
		return "", problem("The download was cut off", fmt.Errorf("GET %s: %d of %d bytes", a.URL, n, a.Size))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 {
		return "", problem("The download does not match the signed release, so Hearth did not use it", fmt.Errorf("SHA-256 %s, manifest says %s", got, a.SHA256))
	}
	if err := f.Sync(); err != nil {
		return "", problem("Hearth could not save the update", err)
	}
	if err := f.Close(); err != nil {
		return "", problem("Hearth could not save the update", err)
	}
	ok = true
	return filepath.Clean(path), nil
}
