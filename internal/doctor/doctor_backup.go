package doctor

import (
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/backup"
)

// backupStale is the age at which doctor warns that the daily backup has
// not run (a day late).
const backupStale = 2 * backup.DailyEvery

// newestBackup is the newest verified backup whose bytes are still those
// that were verified (backup.Recheck), and the newer ones that were
// changed since; ok is false when there is none.
func (d *doctor) newestBackup() (newest backup.Info, changed []backup.Info, ok bool, err error) {
	all, err := backup.List(backup.Dir(d.dataDir))
	if err != nil {
		return backup.Info{}, nil, false, err
	}
	for _, info := range all {
		if backup.Recheck(info) != nil {
			changed = append(changed, info)
			continue
		}
		return info, changed, true, nil
	}
	return backup.Info{}, changed, false, nil
}

// restoreAdvice is what to do about a damaged hearth.db: restore the
// newest verified backup, named.
func (d *doctor) restoreAdvice() string {
	newest, _, ok, err := d.newestBackup()
	if err != nil || !ok {
		return fmt.Sprintf("stop Hearth and restore hearth.db from a backup in %s (there is no verified one)", backup.Dir(d.dataDir))
	}
	return fmt.Sprintf("stop Hearth and run: hearth-tray restore %s (the newest verified backup, made %s)", newest.File, newest.Made.Local().Format("2006-01-02 15:04"))
}

// checkBackups names the newest verified backup in <data>/backups and
// warns when there is none, when the daily one is late, or when a backup
// no longer has the bytes that were verified. It only reads.
func (d *doctor) checkBackups() {
	const name = "backups"
	if !d.homeExists {
		return
	}
	newest, changed, ok, err := d.newestBackup()
	if err != nil {
		d.line(checkWarn, name, err.Error())
		return
	}
	for _, c := range changed {
		d.line(checkWarn, name, fmt.Sprintf("%s has changed since it was verified; it will not be restored", c.Path))
	}
	if !ok {
		d.line(checkWarn, name, fmt.Sprintf("no verified backup in %s yet: hearth-tray backup makes one now (a running Hearth makes one daily)", backup.Dir(d.dataDir)))
		return
	}
	detail := fmt.Sprintf("newest verified backup %s (made %s, %s, %d ledger entries)", newest.Path, newest.Made.Local().Format("2006-01-02 15:04"), newest.Reason, newest.LedgerEntries)
	if age := time.Since(newest.Made); age > backupStale {
		d.line(checkWarn, name, fmt.Sprintf("%s is %d days old: the daily backup has not run (is Hearth running?); hearth-tray backup makes one now", detail, int(age.Hours()/24)))
		return
	}
	d.line(checkOK, name, detail)
}
