package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/store"
)

// checkStorage reports the space fs undo copies and artifacts take against
// storage_budget_bytes, read from hearth.db opened read-only. Over the
// budget is a warning: a running Hearth prunes the oldest within
// BudgetEvery, and what is still over is alive (an unfinished job's
// artifact, an unread arrival's).
func (d *doctor) checkStorage(ctx context.Context) {
	const name = "storage"
	file := filepath.Join(d.dataDir, "hearth.db")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		d.line(checkOK, name, "nothing stored yet")
		return
	}
	db, err := store.OpenReadOnly(ctx, file)
	if err != nil {
		d.line(checkFail, name, err.Error())
		return
	}
	defer db.Close()
	receipts, rerr := (&fsops.Engine{DB: db}).StoredBytes(ctx)
	arts, aerr := (&artifacts.Store{DB: db}).StoredBytes(ctx)
	if err := errors.Join(rerr, aerr); err != nil {
		d.line(checkWarn, name, fmt.Sprintf("the space used could not be measured (%v); an older database is measured after its next start", err))
		return
	}
	used, budget := receipts+arts, d.cfg.StorageBudgetBytes
	detail := fmt.Sprintf("undo copies %s + artifacts %s = %s", artifacts.HumanBytes(receipts), artifacts.HumanBytes(arts), artifacts.StorageLine(used, budget))
	switch {
	case budget > 0 && used > budget:
		d.line(checkWarn, name, detail+"; over storage_budget_bytes: a running Hearth prunes the oldest copies nothing needs within a minute")
	case budget > 0 && used*10 >= budget*9:
		d.line(checkWarn, name, detail+"; near storage_budget_bytes: the oldest undo receipts will start to expire")
	default:
		d.line(checkOK, name, detail)
	}
}
