package ui

import (
	"net/url"
	"slices"
	"strconv"
)

// The panel's paged lists (Ledger, Tasks) share how their filter and page
// are read from a query and written back into the Pager's links.

// ParseChoice is q's value of key when it is one of choices, else ""
// (everything): a list's "show" filter.
func ParseChoice(q url.Values, key string, choices ...string) string {
	if v := q.Get(key); slices.Contains(choices, v) {
		return v
	}
	return ""
}

// ParsePage is q's "page": a page number counted from 1 (anything else,
// or nothing, is the first).
func ParsePage(q url.Values) int {
	p, _ := strconv.Atoi(q.Get("page"))
	return max(p, 1)
}

// ListQuery is a list's filter as a query string: the pairs of key and
// value (key, value, key, value…) whose value is not empty, and page when
// it is past the first.
func ListQuery(page int, pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v.Encode()
}

// PageOf is how many pages of per rows total rows fill (at least one),
// and page brought within them.
func PageOf(total int64, per, page int) (pages, within int) {
	pages = max(1, int((total+int64(per)-1)/int64(per)))
	return pages, min(max(page, 1), pages)
}
