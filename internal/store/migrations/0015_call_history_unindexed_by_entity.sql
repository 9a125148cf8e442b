-- Call history rows (kind 'call', one per top-level call of a conversation,
-- trimmed to the newest of each) are read by route only: the entity index
-- serves the event list, which never reads them. Leaving them out of it
-- takes an index insert off every call and an index delete off every trim.
DROP INDEX events_entity;
CREATE INDEX events_entity ON events(entity_id, seq) WHERE kind <> 'call';
