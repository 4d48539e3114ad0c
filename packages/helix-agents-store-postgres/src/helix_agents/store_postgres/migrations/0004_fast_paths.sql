-- helix-agents session store, migration 4: fast paths for a conversation's turn.
--
-- The rows of __agents_messages no longer reference the session row: that
-- foreign key cost a lookup of the session row per inserted row, although
-- every writer of rows holds the session row lock already. Deleting a session
-- goes through __agents_delete (functions/writes.sql), which takes that lock
-- and deletes the rows.
--
-- This migration also created the plain-append path of __agents_commit,
-- __agents_delete and __agents_tail; they live in functions/*.sql now,
-- applied after the numbered migrations (docs/backends/postgres.md,
-- Migrations). A schema that applied its earlier text is accepted
-- (_migrations.py).

ALTER TABLE __agents_messages DROP CONSTRAINT __agents_messages_session_id_fkey;
