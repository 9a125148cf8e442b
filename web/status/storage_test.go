package status

import (
	"context"
	"strings"
	"testing"
)

// TestStorageLineOnStatus: the space stored copies take is a line under
// Details, not on the page's main part.
func TestStorageLineOnStatus(t *testing.T) {
	page := renderPage(t, View{Storage: "1.0 MiB of 1.0 GiB (0%)"})
	details := page[strings.Index(page, `data-testid="status-details"`):]
	if !strings.Contains(details, `data-testid="status-storage">1.0 MiB of 1.0 GiB (0%)<`) {
		t.Fatalf("the Status page's Details lack the storage line: %s", page)
	}
	var b strings.Builder
	if err := Facts(View{Storage: "1.0 MiB of 1.0 GiB (0%)"}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "status-storage") {
		t.Fatal("the storage line is on the page's main part")
	}
	if strings.Contains(renderPage(t, View{}), "status-storage") {
		t.Fatal("a storage line without a measure")
	}
}

// TestTesterRowsUnderDetails: "Queued jobs: Running" and the selftest
// are under Details; paused jobs are said on the main part, with the way
// to resume them.
func TestTesterRowsUnderDetails(t *testing.T) {
	var b strings.Builder
	if err := Facts(View{}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "status-queue") || strings.Contains(b.String(), "Queued jobs") {
		t.Errorf("running queued jobs are on the main part: %s", b.String())
	}
	b.Reset()
	if err := Facts(View{QueueHeld: true}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="status-queue"`) || !strings.Contains(b.String(), "resume them on the Safety page") {
		t.Errorf("paused queued jobs are not on the main part: %s", b.String())
	}
	page := renderPage(t, View{SelfTest: &SelfTestSummary{}})
	details := page[strings.Index(page, `data-testid="status-details"`):]
	if !strings.Contains(details, `data-testid="status-selftest"`) || !strings.Contains(details, `data-testid="status-queue"`) {
		t.Errorf("the selftest and the running queue are not under Details: %s", page)
	}
}
