package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
)

// WriteMixReport is what a write mix left on disk.
type WriteMixReport struct {
	Writes, Errors int64
	DBBytes        int64
	// Storage is host_info's storage at the end.
	Storage map[string]any
}

// WriteMix runs clients that do nothing but fs.write for d (files of 4 to
// 250 KiB; one write in four puts back a version the file had before),
// with storage_budget_bytes budget (0: the default), and reports the
// database's size.
func WriteMix(ctx context.Context, bin string, clients int, d time.Duration, budget int64, log func(string, ...any)) (*WriteMixReport, error) {
	work, err := os.MkdirTemp("", "hearth-writemix-")
	if err != nil {
		return nil, err
	}
	if os.Getenv("HEARTH_SOAK_KEEP") == "" {
		defer os.RemoveAll(work)
	} else {
		log("work directory kept: %s", work)
	}
	home, root := filepath.Join(work, "home"), filepath.Join(work, "files")
	for _, dir := range []string{home, root} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	if err := writeConfig(home, root); err != nil {
		return nil, err
	}
	if budget > 0 {
		c, err := config.Load(filepath.Join(home, "config.json"))
		if err != nil {
			return nil, err
		}
		c.StorageBudgetBytes = budget
		if err := config.Write(filepath.Join(home, "config.json"), c); err != nil {
			return nil, err
		}
	}
	srv, err := startServe(ctx, bin, home)
	if err != nil {
		return nil, err
	}
	defer srv.kill()
	stats := &loadStats{}
	out := &outage{}
	out.set(false)
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	var mu sync.Mutex
	rep := &WriteMixReport{}
	var last *client
	for i := range clients {
		c := &client{id: i, url: srv.url, stats: stats, out: out, http: &http.Client{Timeout: 90 * time.Second},
			waiting: map[string]bool{}, early: map[string]bool{}, known: map[string]bool{}, seen: map[string]int{}}
		last = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			var versions []string
			for n := 0; time.Now().Before(end); n++ {
				data := ""
				if len(versions) > 0 && n%4 == 3 {
					data = versions[rand.IntN(len(versions))]
				} else {
					data = strings.Repeat(fmt.Sprintf("%d.%d ", i, n), (4<<10+rand.IntN(246<<10))/8)
					if len(versions) < 8 {
						versions = append(versions, data)
					}
				}
				path := filepath.Join(root, fmt.Sprintf("w%d-%d.txt", i, n%4))
				env, ok := c.call(ctx, "fs", map[string]any{"operation": "write", "path": path, "data": data})
				mu.Lock()
				rep.Writes++
				if !ok || env["state"] != "completed" && env["state"] != "pending" {
					rep.Errors++
					if rep.Errors <= 3 {
						log("write mix: %v", env)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Give the budget's pass (every 5 s) one more turn.
	time.Sleep(6 * time.Second)
	if env, ok := last.call(ctx, "machine", map[string]any{"operation": "host_info"}); ok {
		rep.Storage, _ = get(env, "result", "storage").(map[string]any)
		if rep.Storage == nil {
			log("write mix: host_info: %v", env)
		}
	}
	if err := srv.stop(); err != nil {
		return nil, err
	}
	for _, f := range []string{"hearth.db", "hearth.db-wal"} {
		if st, err := os.Stat(filepath.Join(home, f)); err == nil {
			rep.DBBytes += st.Size()
			log("write mix: %s %.1f MiB", f, mib(st.Size()))
		}
	}
	log("write mix: %d clients × %s, %d writes (%d errors); hearth.db %.1f MiB; host_info storage %v", clients, d, rep.Writes, rep.Errors, mib(rep.DBBytes), rep.Storage)
	return rep, nil
}
