-- A conversation's evidence (internal/evidence, served as MCP resources)
-- lists its commands, permits and artifacts newest first, a page at a time:
-- each list reads only that conversation's rows, in order.
CREATE INDEX commands_route ON commands(route, created_at);
CREATE INDEX permits_route ON permits(route, created_at);
CREATE INDEX artifacts_route ON artifacts(route, created_at);
