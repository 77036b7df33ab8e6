import type { Db } from './database.js';
import { applyMigrations } from './migrations.js';

const COMPONENT = 'lanes';

/** Each step runs once, in order, inside one BEGIN IMMEDIATE transaction with its record. */
const LANES_MIGRATIONS: readonly string[] = [
  `CREATE TABLE lanes (
    id TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    title TEXT NOT NULL,
    goal TEXT NOT NULL,
    paths TEXT NOT NULL,            -- JSON array of path globs
    priority INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('proposed','active','paused','done','abandoned')),
    coordinator TEXT NOT NULL,
    related_lanes TEXT NOT NULL,    -- JSON array of lane ids, in the order recorded
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX lanes_by_repo ON lanes (repo, state, priority, created_at);

  CREATE TABLE lane_events (
    seq INTEGER PRIMARY KEY,
    lane_id TEXT NOT NULL REFERENCES lanes (id),
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    type TEXT NOT NULL,
    detail TEXT NOT NULL           -- JSON object
  ) STRICT;
  CREATE INDEX lane_events_by_lane ON lane_events (lane_id, seq);

  CREATE TABLE asks (
    id TEXT PRIMARY KEY,
    lane_id TEXT NOT NULL REFERENCES lanes (id),
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    payload TEXT NOT NULL,          -- JSON value
    priority INTEGER NOT NULL,
    posted_by TEXT NOT NULL,
    assignee TEXT,
    idempotency_key TEXT,
    state TEXT NOT NULL CHECK (state IN ('open','claimed','answered','cancelled','expired')),
    holder TEXT,
    lease_until INTEGER,
    fence INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    answer TEXT CHECK (answer IN ('complete','deny','grant')),
    answer_note TEXT,
    answered_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX asks_by_state ON asks (lane_id, state, priority, created_at);
  -- The queue itself: only unanswered asks, already in hand-out order, so picking the next ask
  -- reads a few index entries instead of sorting every open ask under the write lock.
  CREATE INDEX asks_queue ON asks (lane_id, priority, created_at) WHERE state IN ('open', 'claimed');
  CREATE UNIQUE INDEX asks_idempotency ON asks (lane_id, posted_by, idempotency_key) WHERE idempotency_key IS NOT NULL;

  CREATE TABLE ask_dependencies (
    ask_id TEXT NOT NULL REFERENCES asks (id),
    depends_on TEXT NOT NULL REFERENCES asks (id),
    PRIMARY KEY (ask_id, depends_on)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX ask_dependents ON ask_dependencies (depends_on);

  CREATE TABLE ask_events (
    seq INTEGER PRIMARY KEY,
    ask_id TEXT NOT NULL REFERENCES asks (id),
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    type TEXT NOT NULL,
    fence INTEGER,
    detail TEXT NOT NULL           -- JSON object
  ) STRICT;
  CREATE INDEX ask_events_by_ask ON ask_events (ask_id, seq);

  CREATE TABLE roles (
    repo TEXT NOT NULL,
    principal TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('owner','coordinator','maintainer','contributor')),
    lane_id TEXT NOT NULL DEFAULT '', -- '' for a repo-wide role
    granted_by TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (repo, principal, role, lane_id)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    actor TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  ) STRICT;`,
];

/** Creates the lanes, asks, roles and tokens tables; safe to call on every open, from any process. */
export function migrateLanes(db: Db, now: number = Date.now()): void {
  applyMigrations(db, COMPONENT, LANES_MIGRATIONS, now);
}
