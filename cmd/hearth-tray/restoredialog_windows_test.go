package main

import (
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// Task dialog notifications and messages (commctrl.h).
const (
	tdnCreated     = 0
	tdmClickButton = 0x0400 + 102 // WM_USER + 102
)

var procSendMessage = windows.NewLazySystemDLL("user32.dll").NewProc("SendMessageW")

// TestTaskDialogRestoreButton shows the real task dialog and clicks a
// button from its callback once it is created: with a backup, the
// dialog's Restore button answers idRestore and Cancel does not; with
// none, its only button is OK. Where comctl32 has no TaskDialogIndirect,
// askRestore falls back to a message box, which this test cannot click.
func TestTaskDialogRestoreButton(t *testing.T) {
	if err := procTaskDialogIndirect.Find(); err != nil {
		t.Skipf("no TaskDialogIndirect in this comctl32: %v", err)
	}
	// seen is written on the dialog's thread and read after the dialog
	// closed, or for the failure message (a racy read, for a diagnosis).
	var seen []uintptr
	clicking := func(id uintptr) uintptr {
		return syscall.NewCallback(func(hwnd, msg, wparam, lparam, ref uintptr) uintptr {
			seen = append(seen, msg)
			if msg == tdnCreated {
				procSendMessage.Call(hwnd, tdmClickButton, id, 0)
			}
			return 0
		})
	}
	// show runs the dialog, failing rather than hanging when the click
	// finds no such button.
	show := func(p restorePrompt, click uintptr) (int32, error) {
		type answer struct {
			id  int32
			err error
		}
		done := make(chan answer, 1)
		go func() {
			id, err := taskDialog(p, clicking(click))
			done <- answer{id, err}
		}()
		select {
		case a := <-done:
			return a.id, a.err
		case <-time.After(30 * time.Second):
			t.Fatalf("the dialog did not close on a click of button %d: no such button? (notifications %v)", click, seen)
			return 0, nil
		}
	}
	p := restorePrompt{Title: "Hearth", Instruction: "Hearth's database is damaged", Content: "The newest verified backup is hearth-x.db.",
		CanRestore: true, Command: "hearth-tray restore hearth-x.db", Details: "database disk image is malformed (11)"}
	if id, err := show(p, idRestore); err != nil || id != idRestore {
		t.Fatalf("Restore clicked: %d %v", id, err)
	}
	if id, err := show(p, 2 /* IDCANCEL */); err != nil || id != 2 {
		t.Fatalf("Cancel clicked: %d %v", id, err)
	}
	p.CanRestore = false
	if id, err := show(p, idOK); err != nil || id != idOK {
		t.Fatalf("OK clicked without a backup: %d %v", id, err)
	}
}
