package selftest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/tray"
)

// permitNoticeArg is the argument of the command the notification check
// asks a permit for. The selftest denies that permit, so the command never
// runs; were it run, hearth-tray would refuse the unknown subcommand.
const permitNoticeArg = "selftest-permit-notice-never-runs"

// checkTrayNotification shows the notification the permit work shows: it
// makes the temporary Hearth wait for a permit (a machine.exec under
// policy ask), lets the tray's notification logic (tray.Notifications,
// the running tray's) poll it and show what it decides through the tray's
// own notifications (tray.Balloons), then denies the permit as the
// selftest operator, so nothing runs.
func (r *run) checkTrayNotification(ctx context.Context) (string, error) {
	show, closeFn := r.o.notify, func() error { return nil }
	if show == nil {
		var err error
		if show, closeFn, err = openNotifications(); err != nil {
			return "", err
		}
	}
	defer closeFn()

	res, err := r.hearth.call(ctx, "machine", map[string]any{"operation": "exec", "command": r.exe, "args": []string{permitNoticeArg}, "cwd": r.root})
	if err != nil {
		return "", err
	}
	pid := res.Str("permit_id")
	if res.State() != "pending" || pid == "" {
		return "", fmt.Errorf("machine.exec under policy ask must wait for a permit: %s", res.Brief())
	}
	op := r.hearth.app.Operator
	pending, err := op.Permits(ctx, "pending")
	if err != nil {
		return "", err
	}
	j := slices.IndexFunc(pending, func(p govern.Permit) bool { return p.ID == pid })
	if j < 0 {
		return "", fmt.Errorf("the operator does not see permit %s", pid)
	}
	summary := tray.PermitSummary(pending[j])
	denied := false
	deny := func() error {
		if denied {
			return nil
		}
		denied = true
		if err := op.Deny(context.WithoutCancel(ctx), pid, Operator); err != nil {
			return fmt.Errorf("deny permit %s as %s: %w", pid, Operator, err)
		}
		return nil
	}
	defer deny()

	var shown []tray.Notice
	var showErr error
	a := r.hearth.app
	n := &tray.Notifications{Permits: a.PendingPermits, Status: a.Gov.Status, Show: func(nt tray.Notice) error {
		shown = append(shown, nt)
		if err := show(nt); err != nil {
			showErr = err
			return err
		}
		return nil
	}}
	n.Poll(ctx)
	i := slices.IndexFunc(shown, func(nt tray.Notice) bool { return nt.Kind == tray.NoticePermit })
	if i < 0 {
		return "", fmt.Errorf("the tray's notification logic decided on no permit notice for waiting permit %s (notices %+v)", pid, shown)
	}
	nt := shown[i]
	// The notice says what the permit asks for (its summary), cut only by
	// the notice's own length limit.
	text := strings.TrimSuffix(nt.Text, "…")
	if nt.Page != "/permits" || !(strings.HasPrefix(text, summary) || strings.HasPrefix(summary, text)) {
		return "", fmt.Errorf("the permit notice %+v does not name the waiting request or open the Permits page", nt)
	}
	var noArea *SkipError
	if errors.As(showErr, &noArea) {
		return "", showErr
	}
	if showErr != nil {
		return "", fmt.Errorf("show the permit notification: %w", showErr)
	}
	if err := deny(); err != nil {
		return "", err
	}
	still, err := op.Permits(ctx, "pending")
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(still, func(p govern.Permit) bool { return p.ID == pid }) {
		return "", fmt.Errorf("permit %s still waits after its denial", pid)
	}
	return fmt.Sprintf("the tray's permit notification (%q, opening %s) was shown for permit %s, which the selftest then denied as %q", nt.Title, nt.Page, pid, Operator), nil
}
