-- The store's own scratch table: DiskFull writes a row here and deletes
-- it in the same transaction to see whether the disk has room again.
CREATE TABLE store_probe (
    b BLOB NOT NULL
) STRICT;
