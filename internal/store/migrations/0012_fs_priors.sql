-- Prior content kept for fs undo, stored once per distinct content: a file
-- written back and forth, or many receipts of the same starting content,
-- keep one copy. A receipt refers to its inline prior content by SHA-256
-- (prior_sha256); spilled prior content (large files) stays in prior_file.
-- A copy no receipt refers to any more is deleted by the storage budget's
-- pass (internal/fsops, SweepPriors).
-- size comes before data so that summing sizes never reads the blobs.
CREATE TABLE fs_priors (
    sha256 TEXT PRIMARY KEY,
    size   INTEGER NOT NULL,
    data   BLOB NOT NULL
) STRICT;

ALTER TABLE fs_receipts ADD COLUMN prior_sha256 TEXT REFERENCES fs_priors(sha256);
CREATE INDEX fs_receipts_prior_sha256 ON fs_receipts(prior_sha256) WHERE prior_sha256 IS NOT NULL;

-- Existing inline copies move into fs_priors, one row per content. The
-- receipt's pre_sha256 is the SHA-256 of exactly that content.
INSERT INTO fs_priors(sha256, size, data)
    SELECT pre_sha256, length(prior), prior FROM fs_receipts
    WHERE prior IS NOT NULL AND pre_sha256 IS NOT NULL
    ON CONFLICT(sha256) DO NOTHING;
UPDATE fs_receipts SET prior_sha256 = pre_sha256, prior = NULL
    WHERE prior IS NOT NULL AND pre_sha256 IS NOT NULL;
