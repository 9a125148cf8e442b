-- The risk table's case of a permit's call (internal/risk), what it acts
-- on (a path, an application) and what it would do in plain words, for
-- the operator's card. An approved permit of a UI call with case
-- 'ui_app' allows that application for the rest of its conversation.
ALTER TABLE permits ADD COLUMN risk_case TEXT NOT NULL DEFAULT '';
ALTER TABLE permits ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE permits ADD COLUMN said TEXT NOT NULL DEFAULT '';
