import { SEARCH_WEIGHTS, SNIPPET_TOKENS } from '../rung-search.js';
import type { ComponentCopy, TableCopy } from './copy-spec.js';
import type { PgDatabase } from './database.js';
import { applyPgMigrations, type MigrationOutcome } from './migrations.js';
import { separatorBracket } from './rung-search.js';

const COMPONENT = 'rungs';

/** The text search configuration of the ladder's index and queries. */
export const SEARCH_CONFIG = 'ladder_search';

/**
 * ts_rank_cd's weights for the classes {D, C, B, A}: body C, path B, summary A, in SEARCH_WEIGHTS'
 * proportions (it takes weights from 0 to 1, so each is divided by the largest). D is unused.
 */
export const TS_RANK_WEIGHTS = `{0, ${SEARCH_WEIGHTS.body / SEARCH_WEIGHTS.summary}, ${SEARCH_WEIGHTS.path / SEARCH_WEIGHTS.summary}, 1}`;

/**
 * Marks in ladder_search_snippet's output: \x01 around every run of separators (so PostgreSQL's
 * parser, which reads `util.js` as one host name, sees the words SQLite sees; removed again in SQL),
 * \x02 and \x03 around a match (made brackets, and the snippet's ellipses decided, in the store).
 * Any of them in a rung's own text becomes a space first.
 */
export const SNIPPET_MATCH_START = '\x02';
export const SNIPPET_MATCH_END = '\x03';

/**
 * One transaction, under the migrations' advisory lock. unaccent is a trusted extension
 * (PostgreSQL 13 and later): a database owner, or any user with CREATE on the database, creates it
 * without being a superuser; where it exists already, in whatever schema, it is used as it is.
 */
const RUNGS_MIGRATIONS: readonly string[] = [
  `DO $$
  DECLARE
    unaccent_schema name;
  BEGIN
    SELECT n.nspname INTO unaccent_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
    IF unaccent_schema IS NULL THEN
      IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'unaccent') THEN
        RAISE EXCEPTION 'the ladder''s search needs PostgreSQL''s unaccent extension, which this server does not have: install PostgreSQL''s contrib modules (Debian''s postgresql package has them), then start again';
      END IF;
      IF NOT has_database_privilege(current_database(), 'CREATE') THEN
        RAISE EXCEPTION 'the ladder''s search needs the unaccent extension, and % may not create it here: have the database owner run CREATE EXTENSION unaccent in %, then start again', current_user, current_database();
      END IF;
      CREATE EXTENSION unaccent;
      SELECT n.nspname INTO unaccent_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
    END IF;
    -- The original Porter stemmer, as SQLite's porter tokenizer, and no stop words (SQLite has none).
    CREATE TEXT SEARCH DICTIONARY ladder_porter (TEMPLATE = snowball, LANGUAGE = porter);
    CREATE TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} (PARSER = default);
    -- After ladder_search_words only these token types are left: words (diacritics folded, then
    -- stemmed), words with digits (folded), numbers.
    EXECUTE format('ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} ADD MAPPING FOR asciiword, word WITH %I.unaccent, ladder_porter', unaccent_schema);
    EXECUTE format('ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} ADD MAPPING FOR numword WITH %I.unaccent, simple', unaccent_schema);
    ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} ADD MAPPING FOR uint, int, float, sfloat WITH simple;
  END $$;

  -- Text with every run of separators (WORD_SEPARATORS of rung-search.ts) made one space: the
  -- words SQLite's unicode61 tokenizer finds, whatever the database's locale.
  CREATE FUNCTION ladder_search_words(content text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN regexp_replace(content, E'${separatorBracket().replaceAll('\\', '\\\\')}+', ' ', 'g');

  -- A rung's search entry: summary A, path B, body C (see TS_RANK_WEIGHTS).
  CREATE FUNCTION ladder_rung_search(summary text, path text, body text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN setweight(to_tsvector('${SEARCH_CONFIG}', ladder_search_words(summary)), 'A')
      || setweight(to_tsvector('${SEARCH_CONFIG}', ladder_search_words(path)), 'B')
      || setweight(to_tsvector('${SEARCH_CONFIG}', ladder_search_words(coalesce(body, ''))), 'C');

  -- The best ${SNIPPET_TOKENS} words of a text for a query, matches between \\x02 and \\x03.
  CREATE FUNCTION ladder_search_snippet(content text, query tsquery) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN replace(ts_headline('${SEARCH_CONFIG}',
      regexp_replace(translate(content, E'\\x01\\x02\\x03', '   '), E'${separatorBracket().replaceAll('\\', '\\\\')}+', E'\\x01\\\\&\\x01', 'g'),
      query, E'MaxFragments=1, MaxWords=${SNIPPET_TOKENS}, MinWords=1, ShortWord=0, FragmentDelimiter=" ", StartSel=\\x02, StopSel=\\x03'), E'\\x01', '');

  -- The same columns as SQLite's (times in ms), so the copy moves rows column for column; paths in
  -- byte order as SQLite compares them, whatever the database's collation.
  CREATE TABLE rungs (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    repo TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('repo','directory','file','release','changeset')),
    commit_id TEXT NOT NULL,
    object_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT,
    revision INTEGER NOT NULL CHECK (revision >= 1),
    author TEXT NOT NULL,
    written_at BIGINT NOT NULL,
    -- Written with the row (ladder_rung_search), rebuilt by reindex and after a copy.
    search tsvector NOT NULL DEFAULT '',
    UNIQUE (repo, path)
  );
  -- Kept in the row (compressed if need be) rather than moved out of it: a search reads the entry of
  -- every rung it walks past, and an entry stored apart costs a second lookup for each.
  ALTER TABLE rungs ALTER COLUMN search SET STORAGE MAIN;
  CREATE INDEX rungs_search ON rungs USING gin (search);
  -- A broad search of one repository walks its rungs newest first.
  CREATE INDEX rungs_repo_newest ON rungs (repo, id);

  -- Every write, the current one included, so history needs no second source.
  CREATE TABLE rung_revisions (
    rung_id BIGINT NOT NULL REFERENCES rungs (id),
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    object_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT,
    author TEXT NOT NULL,
    written_at BIGINT NOT NULL,
    PRIMARY KEY (rung_id, revision)
  );`,
];

/** Creates the search configuration, rungs and rung_revisions; safe to call on every start, from any number of servers. */
export function migratePgRungs(db: PgDatabase): Promise<MigrationOutcome> {
  return applyPgMigrations(db, COMPONENT, RUNGS_MIGRATIONS);
}

/** Sets every rung's search entry from its text; `WHERE` narrows it (reindex gives one repository's). */
export const REBUILD_SEARCH = 'UPDATE rungs SET search = ladder_rung_search(summary, path, body)';

function table(name: string, columns: readonly string[], order: string): TableCopy {
  return { table: name, columns, sqliteSelect: `SELECT ${columns.join(', ')} FROM ${name} ORDER BY ${order}` };
}

/** rungs, then rung_revisions, ids kept; then every search entry built and the id sequence moved past the copied ids. */
export const RUNGS_COPY: ComponentCopy = {
  component: COMPONENT,
  tables: [
    table('rungs', ['id', 'repo', 'path', 'kind', 'commit_id', 'object_id', 'summary', 'body', 'revision', 'author', 'written_at'], 'id'),
    table('rung_revisions', ['rung_id', 'revision', 'kind', 'commit_id', 'object_id', 'summary', 'body', 'author', 'written_at'], 'rung_id, revision'),
  ],
  finish: [REBUILD_SEARCH, "SELECT setval(pg_get_serial_sequence('rungs', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM rungs), false)"],
};
