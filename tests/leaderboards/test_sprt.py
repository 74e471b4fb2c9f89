"""The SPRT of ``arena match --sprt`` (leaderboards/sprt.py): LLR values computed by hand from the GSPRT formula that
fishtest and fastchess publish, and real matches that stop (or do not) on it."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from arena.errors import ConfigError
from leaderboards.sprt import PENTANOMIAL, TRINOMIAL, Sprt, evaluate
from tests.leaderboards.support import arena


def test_trinomial_llr_by_hand() -> None:
    """60 wins, 20 draws, 20 losses; H0 elo 0, H1 elo 50, logistic.
    s0 = 0.5, s1 = 1 / (1 + 10^(-50/400)) = 1 / (1 + 0.7498942) = 0.5714631
    var0 = 0.2 (0 - 0.5)^2 + 0.2 (0.5 - 0.5)^2 + 0.6 (1 - 0.5)^2 = 0.05 + 0 + 0.15 = 0.2
    var1 = 0.2 * 0.5714631^2 + 0.2 * 0.0714631^2 + 0.6 * 0.4285369^2 = 0.0653140 + 0.0010214 + 0.1101863 = 0.1765217
    LLR = 100 / 2 * ln(0.2 / 0.1765217) = 50 * ln(1.1330048) = 50 * 0.1248738 = 6.2437"""
    assert Sprt(0, 50).llr((20, 20, 60), TRINOMIAL) == pytest.approx(6.2437, abs=1e-3)


def test_pentanomial_llr_by_hand() -> None:
    """30 pairs: LL 2, LD 3, DD+WL 10, WD 5, WW 10 (pair scores 0, 1/4, 1/2, 3/4, 1); H0 0, H1 50, logistic.
    var0 = (2 * 0.25 + 3 * 0.0625 + 0 + 5 * 0.0625 + 10 * 0.25) / 30 = 3.5 / 30 = 0.1166667
    var1 (s1 = 0.5714631) = (2 * 0.3265700 + 3 * 0.1033385 + 10 * 0.0051070 + 5 * 0.0318755 + 10 * 0.1836438) / 30
         = (0.6531400 + 0.3100155 + 0.0510700 + 0.1593775 + 1.8364380) / 30 = 3.0100410 / 30 = 0.1003347
    LLR = 30 / 2 * ln(0.1166667 / 0.1003347) = 15 * ln(1.1627751) = 15 * 0.1508069 = 2.2621"""
    assert Sprt(0, 50).llr((2, 3, 10, 5, 10), PENTANOMIAL) == pytest.approx(2.2621, abs=1e-3)


def test_bounds_and_decisions() -> None:
    sprt = Sprt(0, 50, alpha=0.05, beta=0.05)
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95)) and sprt.upper == pytest.approx(math.log(0.95 / 0.05))
    assert sprt.decision(3.0) == "H1" and sprt.decision(-3.0) == "H0" and sprt.decision(0.0) is None
    # the pairs of a match: games 2i and 2i+1 swap seats on one seed; a lone last game waits for its partner
    result = evaluate(sprt, [1, 1, 1, 0.5, 0, 1, 1], paired=True)
    assert result.stats == "pentanomial" and result.counts == (0, 0, 1, 1, 1) and result.games == 6


@pytest.mark.parametrize("text, words", [("elo0=0", "elo0 and elo1 are required"), ("elo0=5,elo1=1", "elo0 < elo1"),
                                         ("elo0=0,elo1=5,model=bayes", "logistic or normalized"),
                                         ("elo0=0,elo1=x", "not a number"), ("elo0=0,elo1=5,alpha=0.7,beta=0.5",
                                                                             "alpha + beta < 1")])
def test_bad_settings_are_one_clear_line(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        Sprt.parse(text)


def _match(tmp_path: Path, *args: str) -> dict:
    done = arena(tmp_path, "match", *args, "--json", timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_lopsided_pairing_stops_early_with_h1(tmp_path: Path) -> None:
    """greedy plays Nim perfectly and random does not: H1 (greedy at least 50 Elo stronger) long before 400 games."""
    out = _match(tmp_path, "nim", "greedy", "random", "--games", "400", "--sprt", "elo0=0,elo1=50")
    assert out["sprt"]["decision"] == "H1" and out["sprt"]["llr"] >= out["sprt"]["upper"]
    assert len(out["games"]) < 400 and len(out["games"]) % 2 == 0
    assert out["sprt"]["stats"] == "pentanomial"


def test_an_even_pairing_does_not_accept_h1(tmp_path: Path) -> None:
    out = _match(tmp_path, "hex(size=5)", "random", "random", "--games", "60", "--sprt", "elo0=0,elo1=50")
    assert out["sprt"]["decision"] != "H1"


def test_sprt_needs_two_bots(tmp_path: Path) -> None:
    done = arena(tmp_path, "match", "sorry(players=3)", "random", "random", "random", "--sprt", "elo0=0,elo1=50")
    assert done.returncode == 2 and "--sprt compares two bots" in done.stderr
