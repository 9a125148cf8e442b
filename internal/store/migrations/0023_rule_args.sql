-- An allow-rule covers the program and the arguments the permit card
-- showed (a JSON array a call's arguments must begin with). A rule made
-- before keeps '[]': the program with any arguments, as before, but now
-- under the same limits as every rule (harmless environment variables
-- only, no interpreter, no argument of the per-program table), so none
-- became broader.
ALTER TABLE rules ADD COLUMN args TEXT NOT NULL DEFAULT '[]';
