-- Command-id replay (internal/govern) looks a command id up in futures and
-- permits as well as in commands: a detached call has its future, and a
-- parked call its permit, before governance journals the command itself.
CREATE INDEX futures_command ON futures(command_id);
CREATE INDEX permits_command ON permits(command_id, created_at);
