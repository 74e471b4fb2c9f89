"""A final's league table (arena/tournament/finals.py): what `arena final` writes and what `arena serve` rebuilds
from the stored config are the same league, for every format."""
from __future__ import annotations

from pathlib import Path

import pytest

from arena.league.config import parse_config
from arena.tournament import finals


@pytest.mark.parametrize("fmt", finals.FORMATS)
def test_a_stored_final_rebuilds_the_same_league(tmp_path: Path, fmt: str) -> None:
    ladder = {"name": "course", "games": ["nim"], "seed": 9, "limits": {"move_time": 1.5, "max_game_seconds": None}}
    table = finals.final_table(ladder, tmp_path / "c.sqlite", fmt, ["nim(n=7)"], 3)
    config = parse_config(table, where="final")
    assert config.name == "course final" and config.games == ("nim(n=7)",) and config.format == fmt
    assert config.tournament["field_from"] == "course" and config.limits.move_time == 1.5
    again = parse_config(finals.table_of(config.to_dict(), tmp_path / "c.sqlite"), where="stored")
    assert again.to_dict() == config.to_dict()


def test_a_final_loses_the_bots_withdrawn_from_its_ladder_but_not_those_replaced(tmp_path: Path) -> None:
    from arena.tournament.progress import leavers
    from leaderboards.store import Store
    with Store.open(tmp_path / "c.sqlite", create=True) as store:
        ladder = store.ensure_league("course", {"name": "course"})
        final = store.ensure_league("course final", {"tournament": {"field_from": "course"}})
        copies = {}
        for name in ("ann", "ben", "cat"):
            store.upsert_bot(ladder.id, name, origin="submit", spec="random")
            copies[name] = store.upsert_bot(final.id, name, origin="submit", spec="random")[0].id
        assert leavers(store, final.id) == set()
        ann = store.current_bot(ladder.id, "ann")
        assert ann is not None
        store.retire_bot(ann.id, "withdrawn by prof")
        store.upsert_bot(ladder.id, "ben", origin="submit", spec="greedy")  # a new version: ben is still in
        assert leavers(store, final.id) == {copies["ann"]}
        store.retire_bot(copies["cat"], "removed from the league file")  # left the final itself
        assert leavers(store, final.id) == {copies["ann"], copies["cat"]}
