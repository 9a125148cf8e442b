-- Host ledger (docs/DESIGN.md, "Governance"): append-only canonical JSON entries chained by prev,
-- the stored hashes of their RFC 6962 Merkle tree, signed checkpoints, and
-- the sizes of exported evidence bundles. Written only by internal/ledger.
CREATE TABLE ledger_entries (
    seq  INTEGER PRIMARY KEY,           -- 1-based, contiguous
    kind TEXT NOT NULL,                 -- copy of the entry's kind, for queries
    ts   INTEGER NOT NULL,              -- unix milliseconds, same instant as the entry's ts
    body BLOB NOT NULL,                 -- canonical JSON bytes of the entry, hashed as stored
    hash BLOB NOT NULL                  -- SHA-256(body): the next entry's prev
) STRICT;

-- Stored hashes of the Merkle tree, indexed by tlog.StoredHashIndex, so the
-- tree hash and proofs for any size are computed without rereading leaves.
CREATE TABLE ledger_hashes (
    idx  INTEGER PRIMARY KEY,
    hash BLOB NOT NULL
) STRICT;

-- Append-only: the ledger never rewrites history. This guards against bugs,
-- not attackers; verification is what detects tampering.
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries is append-only'); END;
CREATE TRIGGER ledger_hashes_no_update BEFORE UPDATE ON ledger_hashes
BEGIN SELECT RAISE(ABORT, 'ledger_hashes is append-only'); END;
CREATE TRIGGER ledger_hashes_no_delete BEFORE DELETE ON ledger_hashes
BEGIN SELECT RAISE(ABORT, 'ledger_hashes is append-only'); END;

-- Signed checkpoints: a sumdb/note over "<origin>\n<size>\n<base64 root>\n",
-- with the verifier key that signed it.
CREATE TABLE ledger_checkpoints (
    size       INTEGER NOT NULL,
    vkey       TEXT NOT NULL,
    note       TEXT NOT NULL,
    created_at INTEGER NOT NULL,        -- unix milliseconds
    PRIMARY KEY (size, vkey)
) STRICT;

-- Each successful evidence export: the next export proves consistency from
-- the latest size here.
CREATE TABLE ledger_exports (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL         -- unix milliseconds
) STRICT;
