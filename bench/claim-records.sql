-- What one claim on a team database writes and reads, as a single
-- server-side function: the floor under any hub, with no HTTP and no round
-- trips but the call. bench/bench-team.py runs it through pgbench beside
-- the hubs' claims and the raw one-row claim. It follows the hub's claim
-- (src/board/tools/claims.rs) on a board with no per-actor WIP limit:
-- the write lock shared with other claims and the actor's own lock, the
-- check for expired leases, the board's settings read, the first ready
-- task locked (passing over those others hold) with the end of
-- in_progress, the task's row, its lease, three history entries and the
-- request's record; the board's revision moves at commit by its trigger.
-- With `records` false it only moves the task (no locks, settings, lease,
-- history or request record): what the board's own table costs a claim.
CREATE FUNCTION bench_claim(actor text, now text, expires text, request text, records boolean)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    picked tasks%ROWTYPE;
    last_position double precision;
BEGIN
    IF records THEN
        PERFORM pg_advisory_xact_lock_shared(7165072171032994305);
        PERFORM pg_advisory_xact_lock(1668248321, hashtext(actor));
        IF (SELECT min(expires_at) FROM task_leases) <= now THEN
            RETURN NULL;
        END IF;
        PERFORM text FROM shared_files WHERE name = 'board.toml';
    END IF;
    SELECT t.* INTO picked FROM tasks t
     WHERE t.status = 'icebox'
       AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.seq = d.depends_on
                        WHERE d.task = t.seq AND dt.status NOT IN ('complete', 'archive'))
     ORDER BY t.priority, t.position, t.seq LIMIT 1 FOR UPDATE OF t SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT e.position INTO last_position FROM tasks e
     WHERE e.status = 'in_progress' ORDER BY e.position DESC LIMIT 1;
    UPDATE tasks SET status = 'in_progress', assignee = actor,
           position = coalesce(last_position, 0) + 1, version = picked.version + 1,
           started_at = coalesce(picked.started_at, now), updated_at = now, updated_by = actor
     WHERE seq = picked.seq;
    IF NOT records THEN
        RETURN picked.seq;
    END IF;
    INSERT INTO task_leases(task, holder, expires_at) VALUES (picked.seq, actor, expires)
        ON CONFLICT (task) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at;
    INSERT INTO task_history(task, at, actor, source, field, old_value, new_value, version, user_name)
    VALUES (picked.seq, now, actor, 'rest', 'status', '"icebox"', '"in_progress"', picked.version + 1, NULL),
           (picked.seq, now, actor, 'rest', 'assignee', NULL, to_jsonb(actor)::text, picked.version + 1, NULL),
           (picked.seq, now, actor, 'rest', 'lease', NULL,
            jsonb_build_object('holder', actor, 'expires_at', expires)::text, picked.version + 1, NULL);
    INSERT INTO write_requests(request_id, tool, committed_at)
    VALUES (request, 'cos_task_claim_next', 0) ON CONFLICT (request_id) DO NOTHING;
    RETURN picked.seq;
END $$;
