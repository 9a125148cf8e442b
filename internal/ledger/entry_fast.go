package ledger

// checkEntryFast is ParseEntry for verification, without allocating: it
// reports whether raw is a well-formed entry and returns its seq and its
// prev decoded. It is never more lenient than ParseEntry; when it says no,
// the caller asks ParseEntry, which says why (or, should the two ever
// disagree, accepts the entry).
func checkEntryFast(raw []byte, prev *[32]byte) (int64, bool) {
	members, err := checkCanonical(raw)
	if err != nil || len(raw) == 0 || raw[0] != '{' || len(members) != 5 {
		return 0, false
	}
	if string(members[0].key) != "data" || string(members[1].key) != "kind" || string(members[2].key) != "prev" ||
		string(members[3].key) != "seq" || string(members[4].key) != "ts" {
		return 0, false
	}
	data, kind, prevV, seqV, ts := members[0].val, members[1].val, members[2].val, members[3].val, members[4].val
	if data[0] != '{' {
		return 0, false
	}
	k, ok := plainBytes(kind)
	if !ok || !validKind(string(k)) {
		return 0, false
	}
	p, ok := plainBytes(prevV)
	if !ok || !decodeHash(prev, string(p)) {
		return 0, false
	}
	var seq int64
	if len(seqV) == 0 || len(seqV) > 18 || seqV[0] == '0' {
		return 0, false
	}
	for _, c := range seqV {
		if c < '0' || c > '9' {
			return 0, false
		}
		seq = seq*10 + int64(c-'0')
	}
	t, ok := plainBytes(ts)
	if !ok || !validTimestamp(t) {
		return 0, false
	}
	return seq, true
}

// plainBytes is plainString without the copy.
func plainBytes(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	v = v[1 : len(v)-1]
	for _, c := range v {
		if c == '\\' {
			return nil, false
		}
	}
	return v, true
}

// validTimestamp reports whether t is a time in TimeLayout that formats
// back to itself: "YYYY-MM-DDTHH:MM:SS.mmmZ" naming a real instant.
func validTimestamp(t []byte) bool {
	if len(t) != len(TimeLayout) || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.' || t[23] != 'Z' {
		return false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range t[from:to] {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	_, ok7 := num(20, 23)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 {
		return false
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}
