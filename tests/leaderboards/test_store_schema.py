"""A store file is data, not code: only the exact schema arena wrote is opened (issue 22 §6).

A file someone hands over may carry SQLite triggers (run on every insert), views, extra tables or changed table
definitions. Opening it (to read or to write) refuses anything but arena's own schema for its version, created
then or migrated from an earlier one, in one line naming what it found, and never changes the file.
"""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from leaderboards import storefile
from leaderboards.schema import SCHEMA_VERSION
from leaderboards.store import Store
from leaderboards.storefile import NotAStoreError, StoreError
from tests.leaderboards.test_history import V1_SCHEMA

# Additions that make a genuine store a foreign one, and a word of the refusal that names each.
TAMPERS = {
    "trigger": ("CREATE TRIGGER rewrite AFTER INSERT ON games BEGIN "
                "UPDATE games SET returns='[1.0, -1.0]' WHERE id=NEW.id; END", "trigger 'rewrite'"),
    "view": ("CREATE VIEW best AS SELECT * FROM ratings", "view 'best'"),
    "table": ("CREATE TABLE extra (x)", "table 'extra'"),
    "index": ("CREATE INDEX extra_idx ON games (seed)", "index 'extra_idx'"),
    "changed table": ("DROP TABLE meta ;; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT "
                      "'x' CHECK (length(value) < 99)) ;; INSERT INTO meta VALUES ('schema_version', '{v}')",
                      "table 'meta' defined differently"),
    "application_id": ("PRAGMA application_id=1234", "application_id 0x4d2"),
    "user_version": ("PRAGMA user_version=7", "user_version 7"),
}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def genuine(path: Path) -> Path:
    with Store.open(path, create=True) as store:
        store.ensure_league("l", {})
    return path


def tampered(path: Path, sql: str) -> Path:
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in sql.format(v=SCHEMA_VERSION).split(" ;; "):
        conn.execute(statement)
    conn.close()
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{path}{suffix}").exists()
    return path


@pytest.mark.parametrize("kind", sorted(TAMPERS))
@pytest.mark.parametrize("readonly", [False, True])
def test_a_store_with_anything_arena_did_not_write_is_refused_and_left_alone(tmp_path: Path, kind: str,
                                                                            readonly: bool) -> None:
    sql, named = TAMPERS[kind]
    path = tampered(genuine(tmp_path / "s.sqlite"), sql)
    before = digest(path)
    with pytest.raises(NotAStoreError) as refused:
        Store.open(path, readonly=readonly).close()
    line = str(refused.value)
    print(line)
    assert "\n" not in line and "s.sqlite" in line and "not an arena store" in line and named in line, line
    assert digest(path) == before
    assert isinstance(refused.value, StoreError)  # the dashboard and the lock still see a store failure


def test_the_refusal_names_a_hostile_name_escaped(tmp_path: Path) -> None:
    path = tampered(genuine(tmp_path / "s.sqlite"), 'CREATE VIEW "evil\nline\x1b[2J" AS SELECT 1')
    with pytest.raises(NotAStoreError) as refused:
        Store.open(path, readonly=True)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value), str(refused.value)


def test_an_empty_database_with_only_a_view_is_not_taken_for_a_new_store(tmp_path: Path) -> None:
    path = tampered(tmp_path / "s.sqlite", "CREATE VIEW v AS SELECT 1")
    before = digest(path)
    with pytest.raises(NotAStoreError, match="view 'v'"):
        Store.open(path).close()
    assert digest(path) == before


def test_the_derived_earlier_schemas_are_the_ones_that_shipped() -> None:
    """Version 1 as it shipped (frozen in test_history) is the one schema known for version 1 (derived from today's
    by undoing every migration), with and without arena's optional tables (the adaptive schedule's)."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(V1_SCHEMA)
    shipped = storefile._objects(conn)
    known = storefile.known_schemas()[1]
    assert known[0] == shipped and len(known) == 2
    assert {name for _, name, _, _ in known[1] - shipped} == {"schedule_decisions",
                                                              "sqlite_autoindex_schedule_decisions_1"}


def test_a_genuine_version_1_store_is_read_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    conn.close()
    with Store.open(path, readonly=True) as store:
        assert store.schema_version == 1
    with Store.open(path) as store:
        assert store.schema_version == SCHEMA_VERSION
    with Store.open(path, readonly=True) as store:  # and the migrated schema is known too
        assert store.schema_version == SCHEMA_VERSION


def test_a_version_1_store_with_a_trigger_is_refused_before_any_migration(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("CREATE TRIGGER t AFTER UPDATE ON meta BEGIN DELETE FROM leagues; END")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(NotAStoreError, match="trigger 't'.*schema 1"):
        Store.open(path).close()
    assert digest(path) == before


def test_connections_do_not_trust_the_files_schema(tmp_path: Path) -> None:
    path = genuine(tmp_path / "s.sqlite")
    with Store.open(path) as store:
        assert store.conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0
    with Store.open(path, readonly=True) as store:
        assert store.conn.execute("PRAGMA trusted_schema").fetchone()[0] == 0


@pytest.mark.parametrize("readonly", [False, True])
def test_a_store_that_recorded_adaptive_decisions_opens_again(tmp_path: Path, readonly: bool) -> None:
    """The adaptive schedule's table (made by the first decision recorded) is arena's own: such a store opens."""
    path = genuine(tmp_path / "s.sqlite")
    with Store.open(path) as store:
        league = store.find_league("l")
        assert store.record_decision(league.id, {"batch": "first"}) == 0
    with Store.open(path, readonly=readonly) as store:
        assert store.decisions(store.find_league("l").id) == [{"batch": "first"}]


def test_a_changed_decisions_table_is_refused(tmp_path: Path) -> None:
    path = tampered(genuine(tmp_path / "s.sqlite"), "CREATE TABLE schedule_decisions (league_id, batch, decision, "
                                                    "created, evil)")
    with pytest.raises(NotAStoreError, match="schedule_decisions"):
        Store.open(path, readonly=True).close()
