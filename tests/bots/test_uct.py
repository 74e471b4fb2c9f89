"""uct and mcts_reuse: correctness, every parameter, tree reuse, reproducibility, strength.

Structural tests read the compiled tree (``bot.search.root_children()``: action, visits, wins of the
root's children). Strength tests play seeded games with seats alternated; their thresholds are stated
in binomial standard deviations next to each test.
"""
from __future__ import annotations

import math
from typing import Any

import pytest

import bots
import games
from arena.referee.loop import play
from bots._uct import NODE_BYTES, Search
from bots.base import Limit
from bots.uct import UCTBot
from tests.bots.power import design


def state_after(spec: str, actions: list[int]) -> Any:
    state = games.load(spec).new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def searched(spec: str, game_spec: str, actions: tuple[int, ...] = (), seed: int = 0,
             seat: int | None = None) -> UCTBot:
    """A bot built from ``spec`` after one search from the position reached by ``actions``."""
    state = state_after(game_spec, list(actions))
    bot = bots.make(spec, state.game, state.current_player() if seat is None else seat, seed)
    bot.last_action = bot.step(state, Limit())
    return bot


def visits(bot: UCTBot) -> dict[int, int]:
    return {a: v for a, v, _ in bot.search.root_children()}


def win_rates(bot: UCTBot) -> dict[int, float]:
    return {a: w / v for a, v, w in bot.search.root_children() if v}


# ----- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    ("uct(bogus=1)", ("unknown parameter 'bogus'.*valid parameters: iterations, c, expand, sims_per_leaf, "
                      "rollout, final, margin, reuse, max_nodes")),
    ("uct(c=-1)", "'c'.*annealed or a number >= 0"),
    ("uct(c=warm)", "'c'.*annealed or a number >= 0"),
    ("uct(expand=some)", "'expand'.*one of all, one"),
    ("uct(rollout=smart)", "'rollout'.*one of random, greedy"),
    ("uct(final=best)", "'final'.*one of winrate, visits"),
    ("uct(iterations=0)", "'iterations'.*integer from 1"),
    ("uct(sims_per_leaf=0)", "'sims_per_leaf'.*integer from 1"),
    ("uct(max_nodes=10)", "'max_nodes'.*integer from 1000"),
    ("uct(margin=-0.5)", "'margin'"),
    ("uct(reuse=maybe)", "'reuse'.*true or false"),
    ("mcts_reuse(reuse=false)", "'reuse' is fixed"),
])
def test_bad_specs_raise_value_errors_naming_the_valid_values(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bots.make(spec, "nim", 0, 0)


def test_direct_construction_checks_like_a_spec() -> None:
    with pytest.raises(ValueError, match="one of all, one"):
        UCTBot(games.load("nim"), 0, 0, expand="some")


def test_greedy_is_refused_on_hex_listing_the_bots_that_can_play() -> None:
    with pytest.raises(ValueError, match="greedy.*valid bots.*uct"):
        bots.make("greedy", "hex", 0, 0)


def test_bare_names_and_c_values_parse() -> None:
    assert bots.make("uct(c=1.414)", "nim", 0, 0).c == pytest.approx(1.414)
    assert bots.make("mcts_reuse", "nim", 0, 0).reuse is True
    assert bots.make("uct(expand=one)", "nim", 0, 0).sims_per_leaf == 1
    assert bots.make("uct(expand=all)", "nim", 0, 0).sims_per_leaf == 11


def settings(bot: Any) -> tuple:
    return bot.c, bot.expand, bot.sims_per_leaf, bot.final, bot.rollout, bot.reuse


def test_defaults_are_the_strongest_measured_and_the_study_preset_is_one_parameter_away() -> None:
    # docs/bots-uct.md, Defaults: expand=one with C = 0.3 beat the study's settings against mc and MCTSBot.
    assert settings(bots.make("uct", "nim", 0, 0)) == (0.3, "one", 1, "winrate", "random", False)
    assert settings(UCTBot(games.load("nim"), 0, 0)) == (0.3, "one", 1, "winrate", "random", False)
    # The Colosseum study's agent: annealed C, every child at once with 11 playouts each, highest win rate.
    study = ("annealed", "all", 11, "winrate", "random", False)
    assert settings(bots.make("uct(c=annealed)", "nim", 0, 0)) == study
    assert settings(UCTBot(games.load("nim"), 0, 0, c="annealed")) == study
    assert bots.make("uct(c=annealed,expand=one)", "nim", 0, 0).expand == "one"  # given values win
    assert settings(bots.make("mcts_reuse", "nim", 0, 0))[:4] == (0.3, "one", 1, "winrate")


# ----- Nim: the correctness oracle ----------------------------------------------------------------------
def nim_position(pile: int, seat: int) -> Any:
    """Seat ``seat`` to move at ``pile`` (for seat 1, seat 0 first takes one counter from pile + 1)."""
    return state_after(f"nim(n={pile + seat})", [1] * seat)


def winnable(lo: int, hi: int, k: int = 3) -> list[int]:
    return [n for n in range(lo, hi + 1) if n % (k + 1)]


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("spec, last", [("uct(iterations=20000,c=annealed)", 18), ("uct(iterations=20000)", 17)])
def test_uct_with_random_rollouts_finds_the_winning_nim_move(seat: int, spec: str, last: int) -> None:
    # Random-rollout UCT up to pile 18 with the study preset (c=annealed), 17 with the defaults (C = 0.3
    # exploits sooner: at pile 18 it settles on "take 1"); from 19 on both err for some seeds, and beyond
    # about 21 they stay near 50% win rates even at 200k iterations (measured; the Nim study's own
    # finding, which led it to strategic rollouts). The range 5..40 is the next test's (rollout=greedy).
    for pile in winnable(5, last):
        state = nim_position(pile, seat)
        bot = bots.make(spec, state.game, seat, seed=pile)
        assert bot.step(state, Limit()) == pile % 4, f"pile {pile}, seat {seat}: {bot.search.root_children()}"


@pytest.mark.parametrize("seat", [0, 1])
def test_uct_with_strategic_rollouts_finds_the_winning_nim_move_from_5_to_40(seat: int) -> None:
    for pile in winnable(5, 40):
        state = nim_position(pile, seat)
        bot = bots.make("uct(iterations=2000,rollout=greedy)", state.game, seat, seed=pile)
        assert bot.step(state, Limit()) == pile % 4, f"pile {pile}, seat {seat}: {bot.search.root_children()}"


def test_negamax_perspective_each_node_scores_the_player_who_moved_into_it() -> None:
    # Pile 5, k=3: taking 1 leaves 4 and wins against any reply; 2 and 3 let the opponent take the rest.
    # Once the opponent's node finds its winning reply (and picks it, scoring its own wins), the losing
    # root moves fall below one half for the root player while "take 1" nears 1. (A tree that scored
    # every node for the root player would let the opponent pick its worst replies: all near 1.)
    bot = searched("uct(iterations=3000,c=1.4)", "nim(n=5)")
    rates = win_rates(bot)
    assert bot.last_action == 1
    assert rates[1] > 0.9 and rates[2] < 0.5 and rates[3] < 0.5, rates


# ----- every parameter changes behaviour ----------------------------------------------------------------
def test_expand_all_adds_every_child_with_sims_per_leaf_playouts() -> None:
    bot = searched("uct(iterations=1,expand=all,sims_per_leaf=5)", "hex(size=5)")
    assert sorted(visits(bot)) == list(range(25))
    assert set(visits(bot).values()) == {5}
    assert bot.search.root_visits == 125


def test_expand_one_adds_one_child_per_iteration() -> None:
    bot = searched("uct(iterations=7,expand=one)", "hex(size=5)")
    children = bot.search.root_children()
    assert len(children) == 7 and all(v == 1 for _, v, _ in children)
    assert bot.search.root_visits == 7
    # The opened children are a random sample of the legal moves, not the first ones (shuffled).
    assert sorted(a for a, _, _ in children) != list(range(7))


def test_children_order_is_shuffled_per_seed() -> None:
    orders = {tuple(a for a, _, _ in searched("uct(iterations=1,expand=all)", "hex(size=5)",
                                              seed=s).search.root_children())
              for s in range(4)}
    assert len(orders) == 4


def test_rollout_greedy_plays_the_heuristic_in_playouts() -> None:
    # Nim pile 21: with greedy rollouts both sides play perfectly after the first move, so "take 1"
    # (leaving 20) wins every playout and the others lose every playout; random rollouts are mixed.
    greedy = win_rates(searched("uct(iterations=1,expand=all,rollout=greedy)", "nim(n=21)"))
    assert greedy == {1: 1.0, 2: 0.0, 3: 0.0}
    randomised = win_rates(searched("uct(iterations=1,expand=all,rollout=random)", "nim(n=21)"))
    assert any(0.0 < r < 1.0 for r in randomised.values()), randomised


def test_greedy_rollout_falls_back_to_random_without_a_heuristic() -> None:
    # Hex has no heuristic: greedy and random rollouts give mixed, valid statistics alike.
    rates = win_rates(searched("uct(iterations=1,expand=all,rollout=greedy)", "hex(size=5)"))
    assert len(rates) == 25 and any(0.0 < r < 1.0 for r in rates.values())


def test_annealed_and_constant_c_grow_different_trees() -> None:
    # At the root, annealed C equals e - 1; deeper it shrinks, so even the constant e - 1 differs.
    annealed = searched("uct(iterations=300,c=annealed)", "hex(size=5)", seed=3)
    constant = searched(f"uct(iterations=300,expand=all,c={math.e - 1})", "hex(size=5)", seed=3)
    assert visits(annealed) != visits(constant)
    # A huge constant explores evenly; C = 0 piles the visits on few children.
    wide = visits(searched("uct(iterations=300,c=100)", "hex(size=5)", seed=3))
    greedy = visits(searched("uct(iterations=300,c=0)", "hex(size=5)", seed=3))
    assert max(wide.values()) < 2 * min(wide.values())
    assert max(greedy.values()) > 10 * min(greedy.values())


def test_annealed_c_explores_more_near_the_root_than_deep_down() -> None:
    # Below the root, annealed C (0.649 at depth 2) is far smaller than c=1.718, so the tree under
    # the most visited root child is narrower: its visits concentrate on fewer grandchildren.
    def concentration(spec: str) -> float:
        bot = searched(spec, "hex(size=5)", seed=5)
        top = max(visits(bot), key=visits(bot).get)
        below = [bot.search.visits_at([top, a]) for a in range(25) if a != top]
        below = [v for v in below if v > 0]
        return max(below) / sum(below)
    assert concentration("uct(iterations=400,c=annealed)") > concentration(f"uct(iterations=400,expand=all,"
                                                                            f"c={math.e - 1})")


def test_final_winrate_and_visits_pick_by_their_rule_and_can_differ() -> None:
    differ = 0
    for seed in range(6):
        by_rate = searched("uct(iterations=4,expand=all)", "hex(size=5)", seed=seed)
        by_visits = searched("uct(iterations=4,expand=all,final=visits)", "hex(size=5)", seed=seed)
        assert by_rate.search.root_children() == by_visits.search.root_children()   # the same tree
        rates, counts = win_rates(by_rate), visits(by_visits)
        assert rates[by_rate.last_action] == max(rates.values())
        assert counts[by_visits.last_action] == max(counts.values())
        differ += by_rate.last_action != by_visits.last_action
    assert differ > 0


def test_max_nodes_stops_expansion_and_keeps_simulating() -> None:
    bot = searched("uct(iterations=3000,max_nodes=1000,expand=one)", "hex(size=5)")
    assert bot.last_search["pool_full"] and bot.search.n_nodes <= 1000
    assert bot.search.root_visits == 3000
    free = searched("uct(iterations=3000,expand=one)", "hex(size=5)")
    assert not free.last_search["pool_full"] and free.search.n_nodes > 1000


def test_a_full_pool_still_lets_reuse_choose_moves() -> None:
    # The kept subtree can fill the pool; the new root's children are still created (past the cap).
    game = games.load("hex(size=5)")
    record = play(game, [bots.make("mcts_reuse(iterations=3000,max_nodes=1000,expand=one)", game, 0, 0),
                         bots.make("mcts_reuse(iterations=3000,max_nodes=1000)", game, 1, 1)], seed=0)
    assert sorted(record.returns) == [-1.0, 1.0]


def test_memory_limit_caps_the_pool() -> None:
    state = state_after("hex(size=5)", [])
    bot = bots.make("uct(iterations=2000,expand=one)", state.game, 0, 0)
    bot.step(state, Limit(memory_mb=1))
    assert bot.search.max_nodes == max(1000, 2**20 // 4 // NODE_BYTES)
    assert bot.search.n_nodes <= bot.search.max_nodes


def test_node_is_32_bytes() -> None:
    assert NODE_BYTES == 32


# ----- chance nodes ---------------------------------------------------------------------------------------
def test_chance_nodes_hold_outcomes_sampled_by_probability() -> None:
    # Nim with the coin: after our move a flip follows; its two outcomes are children of that node,
    # visited about equally (fair coin): 4.5 binomial sigmas. The node's own first visit was the
    # playout that created it (expand=one), before any flip was sampled.
    bot = searched("uct(iterations=400,expand=one)", "nim(n=9,coin=true)", seed=2)
    top = max(visits(bot), key=visits(bot).get)
    tails, heads = bot.search.visits_at([top, 0]), bot.search.visits_at([top, 1])
    n = tails + heads
    assert n == bot.search.visits_at([top]) - 1
    assert abs(tails - n / 2) < 4.5 * math.sqrt(n) / 2


def test_coin_nim_games_finish_and_uct_beats_random() -> None:
    # 30 games, seats alternated; a fair coin would score 15 +- 2.7: require 22 (2.6 sigma above; a coin
    # reaches it with probability 0.008). Seeded with an iteration budget: the same games every run.
    game = games.load("nim(n=23,coin=true)")
    wins = 0
    for i in range(30):
        seat = i % 2
        seats = [bots.make("random", game, s, 100 + i) for s in range(2)]
        seats[seat] = bots.make("uct(iterations=300,c=annealed)", game, seat, i)  # the configuration measured
        wins += play(game, seats, seed=i).returns[seat] > 0
    assert wins >= 22


# ----- tree reuse -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["hex(size=5)", "nim(n=30,coin=true)"])
def test_tree_reuse_carries_the_visits_of_the_kept_subtree(spec: str) -> None:
    game = games.load(spec)
    bot = bots.make("mcts_reuse(iterations=500)", game, 0, 1)
    state = game.new_initial_state()
    state.apply_action(bot.step(state.clone(), Limit()))
    total_first = bot.search.root_visits
    if state.is_chance_node():
        state.apply_action(0)
    # The opponent answers with its reply most visited in our tree (chance: the other coin side).
    prefix = state.history()
    state.apply_action(max(state.legal_actions(), key=lambda a: bot.search.visits_at(prefix + [a])))
    if state.is_chance_node():
        state.apply_action(1)
    path = state.history()
    kept = bot.search.visits_at(path)
    assert 0 < kept < total_first
    grandchildren = {a: bot.search.visits_at(path + [a]) for a in state.legal_actions()}
    bot.step(state.clone(), Limit())
    assert bot.last_search["reused"] and bot.last_search["start_visits"] == kept
    assert bot.search.root_visits >= kept + 500       # 500 new iterations on top of the kept visits
    for a, v in grandchildren.items():                # the kept children kept their statistics
        assert bot.search.visits_at([a]) >= v


def test_without_reuse_every_search_starts_empty() -> None:
    game = games.load("hex(size=5)")
    bot = bots.make("uct(iterations=200)", game, 0, 1)
    state = game.new_initial_state()
    state.apply_action(bot.step(state.clone(), Limit()))
    state.apply_action(state.legal_actions()[0])
    bot.step(state.clone(), Limit())
    assert not bot.last_search["reused"] and bot.last_search["start_visits"] == 0


def test_reuse_throws_the_tree_away_when_the_position_is_not_a_descendant() -> None:
    bot = bots.make("mcts_reuse(iterations=200)", "hex(size=5)", 0, 1)
    bot.step(state_after("hex(size=5)", [3]), Limit())
    bot.step(state_after("hex(size=5)", [4, 5]), Limit())
    assert not bot.last_search["reused"] and bot.last_search["start_visits"] == 0
    bot.step(state_after("hex(size=5)", [4, 5, 6, 7]), Limit())
    assert bot.last_search["reused"] and bot.last_search["start_visits"] > 0
    bot.restart()
    bot.step(state_after("hex(size=5)", [4, 5, 6, 7, 8, 9]), Limit())
    assert not bot.last_search["reused"]


def test_advance_compacts_the_subtree_with_its_statistics() -> None:
    state = state_after("hex(size=4)", [])
    search = Search(c=1.4, expand_all=False, sims_per_leaf=1, seed=3)
    search.search(state, 3000)
    a, b = 5, 6
    before = {x: (search.visits_at([a, b, x])) for x in range(16)}
    nodes_before = search.n_nodes
    assert search.advance([a, b])
    assert {x: search.visits_at([x]) for x in range(16)} == before
    assert search.n_nodes < nodes_before
    assert not search.advance([99]) and search.n_nodes == 0


def test_mcts_reuse_plays_whole_games() -> None:
    for spec in ("hex(size=5)", "nim(n=17,coin=true)", "doublestep"):
        game = games.load(spec)
        record = play(game, [bots.make("mcts_reuse(iterations=200)", game, 0, 0),
                             bots.make("mcts_reuse(iterations=200)", game, 1, 1)], seed=3)
        assert sorted(record.returns) == [-1.0, 1.0]


# ----- budgets and reproducibility ------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["uct(iterations=60)", "uct(iterations=500,expand=one,c=1.4)",
                                  "mcts_reuse(iterations=60)", "uct(iterations=10,rollout=greedy)"])
def test_same_seed_same_budget_same_moves(spec: str) -> None:
    def game_moves(seed: int) -> list[int]:
        game = games.load("hex(size=5)")
        return play(game, [bots.make(spec, game, 0, seed), bots.make(spec, game, 1, seed + 1)], seed=0).history
    assert game_moves(4) == game_moves(4)
    assert game_moves(4) != game_moves(5)


def test_without_a_budget_or_limit_the_fallback_iterations_run() -> None:
    from bots.uct import FALLBACK_ITERATIONS
    bot = searched("uct", "nim(n=21)")
    assert bot.last_search["iterations"] == FALLBACK_ITERATIONS


def test_a_time_limit_alone_is_a_budget() -> None:
    # Not a timing test: only checks that the time budget, not an iteration count, ended the search.
    state = state_after("hex(size=5)", [])
    bot = bots.make("uct(expand=one)", state.game, 0, 0)
    bot.step(state, Limit(time=0.05))
    assert bot.last_search["iterations"] > 1


@pytest.mark.parametrize("spec", ["uct", "mcts_reuse", "uct(expand=one)"])
def test_a_solved_endgame_still_stops_at_the_deadline(spec: str) -> None:
    # Near the end every leaf is terminal: iterations play no playout, yet must still reach the
    # clock (a bug here once spun until the visit counts overflowed).
    state = state_after("hex(size=5)", [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18])
    bot = bots.make(spec, state.game, state.current_player(), 0)
    assert bot.step(state.clone(), Limit(time=0.05)) in state.legal_actions()
    assert bot.last_search["iterations"] > bot.last_search["playouts"]       # mostly terminal iterations
    assert bot.search.root_visits < 2**30                                     # stopped by the clock


@pytest.mark.parametrize("spec", ["hex(size=5)", "doublestep", "nim(n=30,coin=true)", "colosseum",
                                  "sorry(players=2)"])
def test_uct_plays_legal_moves_on_every_game(spec: str) -> None:
    game = games.load(spec)
    state = game.new_initial_state()
    for _ in range(6):
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        if state.is_terminal():
            break
        bot = bots.make("uct(iterations=20,sims_per_leaf=2)", game, state.current_player(), 0)
        action = bot.step(state.clone(), Limit())
        assert action in state.legal_actions()
        state.apply_action(action)


# ----- strength -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_uct_beats_mc_on_hex_7x7_at_equal_time() -> None:
    # Equal wall clock per move (0.05 s), neither bot keeping a margin. UCT with one child per iteration
    # and c=0.3 (the study's defaults, expand=all with final=winrate, do not beat mc at equal time:
    # docs/bots-uct.md). Measured 33/40 with another CPU-bound process running beside it (as under
    # pytest -n 2). 40 games, seats alternated: a coin wins 20 +- 3.2, an 82% bot 33 +- 2.4; require 27
    # (2.2 sigma above a coin, 2.5 below 82%). At 0.03 s and 32 games it flaked under load (21/32).
    # Timed, so not seeded: a coin passes with probability 0.019, an 82% bot fails with 0.008.
    need = design(40, chance=0.5, measured=0.82, alpha=0.02)
    game = games.load("hex(size=7)")
    wins = 0
    for i in range(40):
        seat = i % 2
        seats = [bots.make("mc(n=0,margin=0)", game, s, 50 + i) for s in range(2)]
        seats[seat] = bots.make("uct(expand=one,c=0.3,margin=0)", game, seat, i)
        wins += play(game, seats, seed=i, limit=Limit(time=0.05)).returns[seat] > 0
    assert wins >= need, f"uct won {wins} of 40 (need {need})"


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.slow
def test_sorry_multiplayer_games_finish_with_sensible_win_rates(players: int) -> None:
    # uct and mcts_reuse (alternating) against random opponents, the search bot in every seat in turn,
    # on Sorry! with 2 pawns each (shorter games). Every game must end with one winner (+1, the others
    # -1/(players-1)). Random seats win 1/players of the games; uct measured 22/40 with 4 players, and with 3
    # 26/40 (docs/bots-uct.md) then 12/24 in this test's first 24 games: 38/64. The threshold is what a bot
    # of random strength reaches with probability <= 5%: 18 of 36 with 3 players, 11 of 24 with 4, power
    # 0.91 / 0.87 at the measured rates (12 games and "more than the random share" let a random bot pass
    # 35-40% of the time). Seeded.
    n = {3: 36, 4: 24}[players]
    need = design(n, chance=1 / players, measured={3: 38 / 64, 4: 22 / 40}[players])
    game = games.load(f"sorry(players={players},pawnsPerPlayer=2)")
    wins = 0
    for i in range(n):
        seat = i % players
        seats = [bots.make("random", game, s, 1000 + 10 * i + s) for s in range(players)]
        # the study preset, whose rates were measured
        spec = "uct(iterations=50,c=annealed)" if i % 2 == 0 else "mcts_reuse(iterations=50,c=annealed)"
        seats[seat] = bots.make(spec, game, seat, i)
        returns = play(game, seats, seed=i).returns
        assert sorted(returns) == [-1 / (players - 1)] * (players - 1) + [1.0]
        wins += returns[seat] > 0
    assert wins >= need, f"won {wins} of {n} (need {need})"
