package ui

import (
	"net/url"
	"testing"
)

func TestParseChoiceAndPage(t *testing.T) {
	for _, c := range []struct {
		query string
		show  string
		page  int
	}{
		{"", "", 1},
		{"show=done&page=3", "done", 3},
		{"show=active", "active", 1},
		{"show=bogus&page=-2", "", 1},
		{"show=DONE&page=x", "", 1},
		{"page=0", "", 1},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := ParseChoice(q, "show", "active", "done"); got != c.show {
			t.Errorf("%q: show %q, want %q", c.query, got, c.show)
		}
		if got := ParsePage(q); got != c.page {
			t.Errorf("%q: page %d, want %d", c.query, got, c.page)
		}
	}
}

func TestListQuery(t *testing.T) {
	for _, c := range []struct {
		page  int
		pairs []string
		want  string
	}{
		{1, nil, ""},
		{1, []string{"show", ""}, ""},
		{2, []string{"show", "calls"}, "page=2&show=calls"},
		{1, []string{"q", "a b&c", "show", "done"}, "q=a+b%26c&show=done"},
		{3, []string{"q", "", "show", "active"}, "page=3&show=active"},
	} {
		if got := ListQuery(c.page, c.pairs...); got != c.want {
			t.Errorf("ListQuery(%d, %q) = %q, want %q", c.page, c.pairs, got, c.want)
		}
	}
}

func TestPageOf(t *testing.T) {
	for _, c := range []struct {
		total             int64
		per, page         int
		wantPages, wantIn int
	}{
		{0, 25, 1, 1, 1},
		{25, 25, 2, 1, 1},
		{26, 25, 2, 2, 2},
		{93, 20, 9, 5, 5},
		{93, 20, 0, 5, 1},
	} {
		pages, in := PageOf(c.total, c.per, c.page)
		if pages != c.wantPages || in != c.wantIn {
			t.Errorf("PageOf(%d, %d, %d) = %d, %d; want %d, %d", c.total, c.per, c.page, pages, in, c.wantPages, c.wantIn)
		}
	}
}
