package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// bulkAppend appends n entries to an empty ledger in one transaction with
// prepared statements, computing tree hashes in memory with the verifier's
// walker instead of reading them back: the same bytes Append would write
// (TestBulkAppendMatchesAppend), fast enough to build a million entries.
func bulkAppend(ctx context.Context, db *store.DB, now func() time.Time, n int, gen func(i int) (string, any)) error {
	return db.InTx(ctx, func(tx *sql.Tx) error {
		if have, err := size(ctx, tx); err != nil || have != 0 {
			return errors.Join(err, errors.New("bulkAppend needs an empty ledger"))
		}
		insEntry, err := tx.PrepareContext(ctx, `INSERT INTO ledger_entries(seq, kind, ts, body, hash) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insEntry.Close()
		insHash, err := tx.PrepareContext(ctx, `INSERT INTO ledger_hashes(idx, hash) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		defer insHash.Close()
		w := newWalker()
		var idx int64
		for i := range n {
			kind, data := gen(i)
			body, err := canonicalData(data)
			if err != nil {
				return err
			}
			e := newEntry(int64(i)+1, now(), kind, w.prev, body)
			_, stored, err := w.add(e.Seq, e.Raw)
			if err != nil {
				return err
			}
			if _, err := insEntry.ExecContext(ctx, e.Seq, e.Kind, e.Time.UnixMilli(), e.Raw, w.last[:]); err != nil {
				return err
			}
			for _, h := range stored {
				if _, err := insHash.ExecContext(ctx, idx, h[:]); err != nil {
					return err
				}
				idx++
			}
		}
		return nil
	})
}

func benchData(i int) (string, any) {
	return KindIntent, map[string]any{
		"primitive":    "fs.write",
		"risk":         "write",
		"route_sha256": sha256Hex(i % 7),
		"input_sha256": sha256Hex(i),
		"command_id":   "cmd-" + sha256Hex(i)[:16],
	}
}

func TestBulkAppendMatchesAppend(t *testing.T) {
	ctx := context.Background()
	viaAppend, dbA := newTestLedger(t)
	for i := range 300 {
		kind, data := benchData(i)
		if _, err := viaAppend.Append(ctx, kind, data); err != nil {
			t.Fatal(err)
		}
	}
	dbB := openTestDB(t)
	if err := bulkAppend(ctx, dbB, testClock(), 300, benchData); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT seq, kind, ts, body, hash FROM ledger_entries ORDER BY seq`,
		`SELECT idx, hash FROM ledger_hashes ORDER BY idx`,
	} {
		a, b := dumpRows(t, dbA, q), dumpRows(t, dbB, q)
		if a != b {
			t.Fatalf("bulkAppend and Append differ on %s", q)
		}
	}
}

func dumpRows(t *testing.T, db *store.DB, q string) string {
	t.Helper()
	rows, err := db.R.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out bytes.Buffer
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			out.WriteString(toString(v))
			out.WriteByte('|')
		}
		out.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func toString(v any) string {
	switch v := v.(type) {
	case []byte:
		return hex.EncodeToString(v)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprintf("%T", v)
	}
}

// BenchmarkAppend measures Append, one transaction per entry, as the
// dispatcher journals intents and outcomes.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	db := openTestDB(b)
	skey, _ := testKey(b, "bench")
	l, err := Open(db, skey)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		kind, data := benchData(n)
		if _, err := l.Append(ctx, kind, data); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkVerify1M builds a ledger of 1,000,000 entries once (bulkAppend,
// in the benchmark's temporary directory) and times VerifyDB over it
// (impl=parallel) beside the sequential walk it replaced (impl=sequential,
// verifySequential), so that benchstat -col /impl compares them under the
// same load. It runs only when -bench names it, since building takes a while:
//
//	go test -run '^$' -bench Verify1M -benchtime 3x ./internal/ledger/
func BenchmarkVerify1M(b *testing.B) {
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), "Verify1M") {
		b.Skip("building 1,000,000 entries takes a while; select it with -bench Verify1M")
	}
	benchVerify(b, 1_000_000)
}

// BenchmarkVerifyGrowth does the same at 10,000 and 100,000 entries, beside
// Verify1M's million, to show how verification grows with the ledger.
func BenchmarkVerifyGrowth(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run("entries="+strconv.Itoa(n), func(b *testing.B) { benchVerify(b, n) })
	}
}

func benchVerify(b *testing.B, n int) {
	ctx := context.Background()
	db := openTestDB(b)
	skey, vkey := testKey(b, "bench")
	l, err := Open(db, skey)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := bulkAppend(ctx, db, time.Now, n, benchData); err != nil {
		b.Fatal(err)
	}
	if _, err := l.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d entries and a checkpoint in %v", n, time.Since(start).Round(time.Millisecond))
	sequential := func() (Report, error) {
		tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return Report{}, err
		}
		defer tx.Rollback()
		var rep Report
		err = verifySequential(ctx, tx, verifyConfig{expectKey: vkey}, &rep)
		return rep, err
	}
	for _, impl := range []struct {
		name   string
		verify func() (Report, error)
	}{
		{"parallel", func() (Report, error) { return VerifyDB(ctx, db, ExpectKey(vkey)) }},
		{"sequential", sequential},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			runs := 0
			cpu0, cpuOK := processCPU()
			for b.Loop() {
				rep, err := impl.verify()
				if err != nil {
					b.Fatal(err)
				}
				if rep.Entries != int64(n) || rep.CheckpointSize != int64(n) {
					b.Fatalf("report = %+v", rep)
				}
				runs++
			}
			b.ReportMetric(float64(runs*n)/b.Elapsed().Seconds(), "entries/s")
			// CPU time per verification: on a shared, loaded machine it
			// moves less than the wall time does.
			if cpu1, ok := processCPU(); ok && cpuOK {
				b.ReportMetric((cpu1-cpu0).Seconds()/float64(runs), "cpu-s/op")
			}
		})
	}
}
