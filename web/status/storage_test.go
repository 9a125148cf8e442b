package status

import (
	"context"
	"strings"
	"testing"
)

func TestStorageLineOnStatus(t *testing.T) {
	var b strings.Builder
	if err := Facts(View{Storage: "1.0 MiB of 1.0 GiB (0%)"}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="status-storage">1.0 MiB of 1.0 GiB (0%)<`) {
		t.Fatalf("the Status page lacks the storage line: %s", b.String())
	}
	b.Reset()
	if err := Facts(View{}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "status-storage") {
		t.Fatal("a storage line without a measure")
	}
}
