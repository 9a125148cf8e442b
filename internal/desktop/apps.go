package desktop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
)

// The installed apps are read once and kept until the folders they come
// from change. Reading them is the slow part of ui.open and ui.apps (on
// Windows every Start menu shortcut is resolved through the shell), and
// one ui.open of an app needs them three times: when its input is checked,
// when governance asks which app it drives, and when it runs. Each time,
// the folders are walked for their entries' names, sizes and times (a
// directory read, no file opened); the apps are read again only when that
// fingerprint differs, so a shortcut added, removed or replaced shows at
// the next call.

// appCache is a Service's last reading of the installed apps.
type appCache struct {
	// list reads the apps (listApps); stamp fingerprints their folders
	// (appsStamp).
	list  func() ([]App, error)
	stamp func() string

	mu    sync.Mutex
	at    string
	apps  []App
	valid bool
}

func newAppCache() *appCache { return &appCache{list: listApps, stamp: appsStamp} }

// get returns the installed apps, read again only when their folders
// changed since the last reading. The slice is shared: callers do not
// change it.
func (c *appCache) get() ([]App, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.stamp()
	if c.valid && at == c.at {
		return c.apps, nil
	}
	apps, err := c.list()
	if err != nil {
		c.valid = false
		return nil, err
	}
	c.apps, c.at, c.valid = apps, at, true
	return apps, nil
}

// stampFolders fingerprints the entries under roots (each one's path,
// size and modification time) and extra (what else the reading depends
// on, such as the language).
func stampFolders(roots []string, extra ...string) string {
	h := sha256.New()
	for _, x := range extra {
		fmt.Fprintf(h, "extra %q\n", x)
	}
	for _, root := range roots {
		fmt.Fprintf(h, "root %q\n", root)
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(h, "unreadable %q\n", p)
				return nil
			}
			info, err := e.Info()
			if err != nil {
				fmt.Fprintf(h, "gone %q\n", p)
				return nil
			}
			fmt.Fprintf(h, "%q %d %d %v\n", strings.TrimPrefix(p, root), info.Size(), info.ModTime().UnixNano(), info.Mode())
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))
}
