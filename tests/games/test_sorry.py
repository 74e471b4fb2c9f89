"""Sorry! rules: the 15 scenarios of shared/specs/sorry.md §11, the deck, the 2's extra draw, seat
mapping, flags, bad specs, chance, action names, and invariants over many random games."""
from __future__ import annotations

import json
import math
import random

import pytest

import games
from games import CHANCE, TERMINAL, GameSpecError, IllegalActionError, InvalidActionError
from games.sorry import COLOURS, SorryGame, SorryState

St, H = "St", "H"
S0, S1, S2, S3, S4 = "S0", "S1", "S2", "S3", "S4"
HOME, START = 65, -1

# Action ids (docs/sorry.md).
PASS, START_OUT = 0, 14


def FWD(k: int) -> int:
    return 15 + k


def BACK(k: int) -> int:
    return 19 + k


def SPLIT(pa: int, a: int, pb: int) -> int:
    j = pb if pb < pa else pb - 1
    return 23 + (pa * 3 + j) * 6 + a - 1


def SWAP(own: int, colour: str, pawn: int) -> int:
    return 95 + own * 16 + COLOURS.index(colour) * 4 + pawn


def SORRY(colour: str, pawn: int) -> int:
    return 159 + COLOURS.index(colour) * 4 + pawn


FULL_DECK = {1: 5, 2: 4, 3: 4, 4: 4, 5: 4, 7: 4, 8: 4, 10: 4, 11: 4, 12: 4, 13: 4}
G4: SorryGame = games.load("sorry")  # type: ignore[assignment]


def at(pawns: dict, card: int | str | None, to_move: str = "red", game: SorryGame = G4) -> SorryState:
    return game.position(pawns, to_move=to_move, card=card)


def after(state: SorryState, action: int) -> SorryState:
    child = state.clone()
    child.apply_action(action)
    return child


def pawns(state: SorryState, colour: str) -> list[int]:
    return state._positions()[COLOURS.index(colour)]


def draw_pile(state: SorryState) -> dict[int, int]:
    pile = state.observation()["draw_pile"]
    return {(13 if k == "sorry" else int(k)): v for k, v in pile.items()}


# ----- §11 scenarios ---------------------------------------------------------------------------------
def test_1_leave_start_and_bump() -> None:
    s = at({"red": [St, St, St, St], "blue": [4]}, 1)
    assert s.legal_actions() == [START_OUT]
    t = after(s, START_OUT)
    assert pawns(t, "red") == [4, START, START, START]
    assert pawns(t, "blue")[0] == START
    for card in (3, 4, 5, 7, 8, 10, 11, 12):
        lost = at({"red": [St, St, St, St], "blue": [4]}, card)
        assert lost.legal_actions() == [PASS], card
        t = after(lost, PASS)
        assert t.current_player() == CHANCE and t.observation()["turn"] == 1  # the turn passes to blue
        assert t._positions() == lost._positions()


def test_2_exit_blocked_by_own_pawn() -> None:
    s = at({"red": [4, St, St, St]}, 1)
    assert s.legal_actions() == [FWD(0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 5
    s = at({"red": [4, St, St, St]}, 2)
    assert s.legal_actions() == [FWD(0)]
    t = after(s, FWD(0))
    assert pawns(t, "red")[0] == 6
    assert t.current_player() == CHANCE and t.observation()["turn"] == 0 and t.observation()["extra_draw"]


def test_3_forced_turn_into_safety() -> None:
    s = at({"red": [58, H, H, H]}, 5)
    assert s.legal_actions() == [FWD(0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 60
    s = at({"red": [59, H, H, H]}, 8)
    assert s.legal_actions() == [FWD(0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 64


def test_4_exact_count_to_home() -> None:
    assert at({"red": [S3, H, H, H]}, 3).legal_actions() == [PASS]
    s = at({"red": [S3, H, H, H]}, 2)
    assert s.legal_actions() == [FWD(0)]
    t = after(s, FWD(0))
    assert pawns(t, "red") == [HOME] * 4
    assert t.is_terminal() and t.current_player() == TERMINAL and t.legal_actions() == []
    assert t.returns() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])


def test_5_backward_shortcut() -> None:
    s = at({"red": [4, H, H, H]}, 4)
    assert s.legal_actions() == [BACK(0)]
    assert pawns(after(s, BACK(0)), "red")[0] == 0
    s = at({"red": [0, H, H, H]}, 8)
    assert s.legal_actions() == [FWD(0)]
    assert after(s, FWD(0)).is_terminal()
    s = at({"red": [0, H, H, H]}, 3)
    assert pawns(after(s, FWD(0)), "red")[0] == 60


def test_6_backward_onto_a_foreign_slide() -> None:
    s = at({"red": [20, H, H, H], "blue": [19]}, 4)
    assert s.legal_actions() == [BACK(0)]
    t = after(s, BACK(0))
    assert pawns(t, "red")[0] == 19
    assert pawns(t, "blue")[0] == START


def test_7_slide_bumps_own_pawn() -> None:
    s = at({"red": [21, 26, H, H], "yellow": [28]}, 3)
    assert s.legal_actions() == [FWD(0), FWD(1)]
    a = after(s, FWD(0))
    assert pawns(a, "red") == [28, START, HOME, HOME]
    assert pawns(a, "yellow")[0] == START
    b = after(s, FWD(1))
    assert pawns(b, "red") == [21, 29, HOME, HOME]
    assert pawns(b, "yellow")[0] == 28


def test_8_own_colour_slide_does_nothing() -> None:
    assert pawns(after(at({"red": [6, H, H, H]}, 3), FWD(0)), "red")[0] == 9
    assert pawns(after(at({"red": [5, H, H, H]}, 4), BACK(0)), "red")[0] == 1


def test_9_own_pawn_block() -> None:
    s = at({"red": [10, 15, H, H]}, 5)
    assert s.legal_actions() == [FWD(1)]
    assert pawns(after(s, FWD(1)), "red")[:2] == [10, 20]


def test_10_seven_split() -> None:
    s = at({"red": [S1, S2, H, H]}, 7)
    # Both orderings reach the same state: one option, the lower id.
    assert s.legal_actions() == [SPLIT(0, 4, 1)]
    assert s.action_to_string(SPLIT(0, 4, 1)) == "split 7: pawn 0 +4 (S1 -> home), pawn 1 +3 (S2 -> home)"
    t = after(s, SPLIT(0, 4, 1))
    assert t.is_terminal() and t.returns()[0] == 1.0
    assert at({"red": [S1, St, St, St]}, 7).legal_actions() == [PASS]


def test_10_seven_split_orderings_that_differ_are_both_kept() -> None:
    # Red 10 and 13: pawn 0 +3 lands on 13 only after pawn 1 has left it.
    s = at({"red": [10, 13, H, H]}, 7)
    legal = s.legal_actions()
    assert SPLIT(0, 3, 1) not in legal            # 10 -> 13 first is blocked by the own pawn
    assert SPLIT(1, 4, 0) in legal                # 13 -> 17 first, then 10 -> 13
    assert pawns(after(s, SPLIT(1, 4, 0)), "red")[:2] == [13, 17]
    # Every other split appears once, under its lower-id ordering (pawn 0 first), except 5+2: both
    # pawns would end on 15 (blocked in either order).
    splits = [a for a in legal if 23 <= a < 95]
    assert splits == sorted({SPLIT(0, a, 1) for a in (1, 2, 4, 6)} | {SPLIT(1, 4, 0)})
    outcomes = [json.dumps(after(s, a)._positions()) for a in splits]
    assert len(set(outcomes)) == len(outcomes)
    assert FWD(0) in legal and FWD(1) in legal


def test_10_split_ordering_is_illegal_if_part_one_bumps_part_two() -> None:
    # Red 21 and 26, card 7: pawn 0 +3 lands on Blue's triangle 24 and slides over 26 (own pawn -> START),
    # so "pawn 0 +3, pawn 1 +4" is illegal; "pawn 1 +4 (26 -> 30), pawn 0 +3 (slide to 28)" is fine.
    s = at({"red": [21, 26, H, H]}, 7)
    legal = s.legal_actions()
    assert SPLIT(0, 3, 1) not in legal
    assert SPLIT(1, 4, 0) in legal
    assert pawns(after(s, SPLIT(1, 4, 0)), "red")[:2] == [28, 30]


def test_7_splits_with_equal_outcomes_are_listed_once() -> None:
    # 3 (28 -> 31, slides to 34) + 4 (15 -> 19) and 6 (28 -> 34) + 1 (15 -> 16, slides to 19) end alike.
    s = at({"red": [28, St, 15, H], "yellow": [19]}, 7)
    legal = s.legal_actions()
    assert SPLIT(0, 3, 2) in legal and SPLIT(0, 6, 2) not in legal
    assert after(s, SPLIT(0, 3, 2))._positions() == s._simulate(SPLIT(0, 6, 2))
    assert pawns(after(s, SPLIT(0, 3, 2)), "red") == [34, START, 19, HOME]


def test_11_ten_card() -> None:
    s = at({"red": [S0, H, H, H]}, 10)
    assert s.legal_actions() == [BACK(0)]
    assert pawns(after(s, BACK(0)), "red")[0] == 2
    s = at({"red": [0, H, H, H]}, 10)
    assert s.legal_actions() == [BACK(0)]
    assert pawns(after(s, BACK(0)), "red")[0] == 59
    s = at({"red": [30, St, St, St]}, 10)
    assert s.legal_actions() == [FWD(0), BACK(0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 40
    assert pawns(after(s, BACK(0)), "red")[0] == 29


def test_12a_eleven_swaps_and_slides() -> None:
    s = at({"red": [10, H, H, H], "blue": [39], "yellow": [42]}, 11)
    assert s.legal_actions() == [FWD(0), SWAP(0, "blue", 0), SWAP(0, "yellow", 0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 21
    t = after(s, SWAP(0, "blue", 0))
    assert pawns(t, "red")[0] == 43 and pawns(t, "yellow")[0] == START and pawns(t, "blue")[0] == 10
    t = after(s, SWAP(0, "yellow", 0))
    assert pawns(t, "red")[0] == 42 and pawns(t, "yellow")[0] == 10 and pawns(t, "blue")[0] == 39


def test_12b_eleven_may_be_declined_only_without_a_forward_move() -> None:
    s = at({"red": [58, H, H, H], "blue": [30]}, 11)
    assert s.legal_actions() == [PASS, SWAP(0, "blue", 0)]
    t = after(s, SWAP(0, "blue", 0))
    assert pawns(t, "red")[0] == 30 and pawns(t, "blue")[0] == 58
    t = after(s, PASS)
    assert t._positions() == s._positions() and t.observation()["turn"] == 1


def test_12c_eleven_reaches_home() -> None:
    s = at({"red": [57, H, H, H], "blue": [30]}, 11)
    assert s.legal_actions() == [FWD(0), SWAP(0, "blue", 0)]
    assert after(s, FWD(0)).returns()[0] == 1.0


def test_13_sorry() -> None:
    s = at({"red": [St, H, H, H], "blue": [31], "yellow": [34]}, "sorry")
    assert s.legal_actions() == [SORRY("blue", 0), SORRY("yellow", 0)]
    t = after(s, SORRY("blue", 0))
    assert pawns(t, "red")[0] == 34 and pawns(t, "blue")[0] == START and pawns(t, "yellow")[0] == START
    t = after(s, SORRY("yellow", 0))
    assert pawns(t, "red")[0] == 34 and pawns(t, "yellow")[0] == START and pawns(t, "blue")[0] == 31
    assert at({"red": [St, H, H, H], "blue": [S2]}, "sorry").legal_actions() == [PASS]
    # No pawn in START: forfeited too.
    assert at({"red": [10, H, H, H], "blue": [20]}, "sorry").legal_actions() == [PASS]


def test_14_foreign_pawn_using_your_slide() -> None:
    s = at({"blue": [0, H, H, H], "red": [3, 4, St, St]}, 1, to_move="blue")
    assert s.legal_actions() == [FWD(0)]
    t = after(s, FWD(0))
    assert pawns(t, "blue")[0] == 4 and pawns(t, "red") == [START] * 4
    s = at({"blue": [19, H, H, H]}, 12, to_move="blue")
    assert s.legal_actions() == [FWD(0)]
    assert pawns(after(s, FWD(0)), "blue")[0] == 34


def test_15_deck_and_reshuffle() -> None:
    state = G4.new_initial_state()
    assert state.current_player() == CHANCE
    assert draw_pile(state) == FULL_DECK and sum(FULL_DECK.values()) == 45
    left = dict(FULL_DECK)
    order = [card for card, count in FULL_DECK.items() for _ in range(count)]
    random.Random(5).shuffle(order)
    for card in order:
        while not state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        total = sum(left.values())
        assert state.chance_outcomes() == [(c, n / total) for c, n in sorted(left.items()) if n]
        state.apply_action(card)
        left[card] -= 1
        assert draw_pile(state) == left
    assert state.observation()["draw_pile_size"] == 0
    while not state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    assert not state.is_terminal()
    # The 46th draw reshuffles all 45 cards.
    assert state.chance_outcomes() == [(c, n / 45) for c, n in sorted(FULL_DECK.items())]
    state.apply_action(13)
    assert draw_pile(state) == {**FULL_DECK, 13: 3}


def test_15_a_winning_two_ends_the_game_without_redraw() -> None:
    t = after(at({"red": [S3, H, H, H]}, 2), FWD(0))
    assert t.is_terminal() and t.chance_outcomes() == [] and t.observation()["winner"] == 0


# ----- the 2's extra draw -----------------------------------------------------------------------------
def test_two_gives_an_extra_draw_even_when_unused_and_chains() -> None:
    s = at({"red": [S4, H, H, H]}, 2)            # S4 + 2 passes HOME: the 2 is forfeited
    assert s.legal_actions() == [PASS]
    t = after(s, PASS)
    assert t.is_chance_node() and t.observation()["turn"] == 0 and t.observation()["extra_draw"]
    t.apply_action(2)                             # another 2: red again
    assert t.current_player() == 0
    t.apply_action(PASS)
    assert t.observation()["turn"] == 0
    t.apply_action(5)                             # not a 2: the turn passes after it
    t.apply_action(PASS)
    assert t.observation()["turn"] == 1 and not t.observation()["extra_draw"]


def test_two_draws_again_can_be_switched_off() -> None:
    game = games.load("sorry(twoDrawsAgain=false)")
    t = after(game.position({"red": [10]}, card=2), FWD(0))
    assert t.observation()["turn"] == 1


# ----- seats, flags and specs --------------------------------------------------------------------------
@pytest.mark.parametrize("players,colours", [(2, ["red", "yellow"]), (3, ["red", "blue", "yellow"]),
                                             (4, ["red", "blue", "yellow", "green"])])
def test_seat_mapping_and_turn_order(players: int, colours: list[str]) -> None:
    game = games.load(f"sorry(players={players})")
    state = game.new_initial_state()
    obs = state.observation()
    assert obs["colors"] == colours and obs["players"] == players == game.num_players()
    assert obs["pawns"] == [[START] * 4] * players
    turns = []
    for card in (5, 3, 8, 12, 5)[:players + 1]:
        turns.append(state.observation()["turn"])
        state.apply_action(card)                  # nobody can move these from START
        assert state.legal_actions() == [PASS]
        assert state.current_player() == turns[-1]
        state.apply_action(PASS)
    assert turns == list(range(players)) + [0]
    for colour in set(COLOURS) - set(colours):    # colours not in play never have a pawn on the board
        assert all(p == HOME for p in pawns(state, colour))


def test_two_player_game_uses_opposite_colours_and_all_slides() -> None:
    game = games.load("sorry(players=2)")
    s = game.position({"red": [13, H, H, H], "yellow": [18]}, card=3)
    t = after(s, FWD(0))                          # 16 is Blue's triangle; blue is not in play
    assert pawns(t, "red")[0] == 19 and pawns(t, "yellow")[0] == START
    s = game.position({"yellow": [10]}, to_move="yellow", card=11)
    assert s.current_player() == 1 and s.legal_actions() == [FWD(0)]
    with pytest.raises(ValueError):
        game.position({"blue": [10]}, card=1)


def test_returns_by_player_count() -> None:
    for players in (2, 3, 4):
        game = games.load(f"sorry(players={players})")
        t = after(game.position({"yellow": [S4, H, H, H]}, to_move="yellow", card=1), FWD(0))
        winner = game.colours().index(2)
        expected = [-1 / (players - 1)] * players
        expected[winner] = 1.0
        assert t.returns() == pytest.approx(expected) and abs(sum(t.returns())) < 1e-12
        assert game.min_utility() == pytest.approx(-1 / (players - 1))


def test_one_out_at_start_and_fewer_pawns() -> None:
    game = games.load("sorry(players=3,oneOutAtStart=true,pawnsPerPlayer=2)")
    obs = game.new_initial_state().observation()
    assert obs["pawns"] == [[4, START], [19, START], [34, START]]
    t = after(game.position({"red": [S4, H]}, card=1), FWD(0))
    assert t.is_terminal() and t.returns()[0] == 1.0


def test_sorry_forward_4_flag() -> None:
    pos = {"red": [10, St, St, St], "blue": [20]}
    assert at(pos, "sorry").legal_actions() == [SORRY("blue", 0)]
    s = games.load("sorry(sorryFwd4=true)").position(pos, card=13)
    assert s.legal_actions() == [FWD(0), SORRY("blue", 0)]
    assert pawns(after(s, FWD(0)), "red")[0] == 14


def test_swap_victim_slides_flag() -> None:
    pos = {"red": [9, H, H, H], "blue": [30]}     # 9 is Red's own long-slide triangle
    t = after(at(pos, 11), SWAP(0, "blue", 0))
    assert pawns(t, "red")[0] == 30 and pawns(t, "blue")[0] == 9
    s = games.load("sorry(swapVictimSlides=true)").position(pos, card=11)
    t = after(s, SWAP(0, "blue", 0))
    assert pawns(t, "red")[0] == 30 and pawns(t, "blue")[0] == 13


@pytest.mark.parametrize("spec,words", [
    ("sorry(players=5)", ["players", "2 to 4"]),
    ("sorry(players=1)", ["players", "2 to 4"]),
    ("sorry(pawnsPerPlayer=0)", ["pawnsPerPlayer", "1 to 4"]),
    ("sorry(pawnsPerPlayer=5)", ["pawnsPerPlayer", "1 to 4"]),
    ("sorry(stopAtFirstWinner=false)", ["stopAtFirstWinner", "not supported"]),
    ("sorry(teamPlay=true)", ["teamPlay", "out of scope"]),
    ("sorry(twodrawsagain=false)", ["unknown parameter", "twoDrawsAgain"]),
    ("sorry(sorryFwd4=maybe)", ["sorryFwd4", "true or false"]),
])
def test_bad_specs(spec: str, words: list[str]) -> None:
    with pytest.raises(GameSpecError) as err:
        games.load(spec)
    for word in words:
        assert word in str(err.value)


def test_spec_round_trip_and_defaults() -> None:
    game = games.load("sorry(players=2,seed=7,sorryFwd4=true)")
    assert str(game) == "sorry(players=2,seed=7,sorryFwd4=true)"
    assert games.load(str(game)) == game
    assert games.load("sorry").num_players() == 4
    params = games.load("sorry").get_parameters()
    assert params["twoDrawsAgain"] and not params["sorryFwd4"] and params["pawnsPerPlayer"] == 4


# ----- chance -----------------------------------------------------------------------------------------
def test_chance_probabilities_follow_the_pile() -> None:
    s = G4.position({"red": [10]}, card=None, pile={2: 1, 7: 3})
    assert s.chance_outcomes() == [(2, 0.25), (7, 0.75)]
    assert s.legal_actions() == [2, 7]
    with pytest.raises(IllegalActionError):
        s.apply_action(5)


def test_compiled_sampler_matches_the_pile() -> None:
    s = G4.position({"red": [10]}, card=None, pile={1: 5, 7: 3, 13: 2})
    n = 20_000
    counts = s._py_sample_draws(n, 11)
    assert set(counts) == {1, 7, 13}
    for card, k in ((1, 5), (7, 3), (13, 2)):
        p = k / 10
        assert abs(counts[card] - n * p) < 5 * math.sqrt(n * p * (1 - p)), (card, counts)


def test_chance_sequence_is_the_pile_then_fresh_decks() -> None:
    s = G4.position({"red": [10]}, card=None, pile={2: 1, 7: 3, 11: 2})
    seq = s._py_chance_sequence(6 + 45 + 10, 3)
    assert sorted(seq[:6]) == [2, 7, 7, 7, 11, 11]
    deck = sorted(c for c, k in FULL_DECK.items() for _ in range(k))
    assert sorted(seq[6:51]) == deck
    assert len(seq) == 61 and all(c in FULL_DECK for c in seq[51:])
    # Different seeds give different orders of the same cards.
    assert s._py_chance_sequence(51, 4) != seq[:51]


# ----- names, observation, board ------------------------------------------------------------------------
def test_action_names_and_their_inverse() -> None:
    s = at({"red": [14, 20, St, H], "blue": [21], "yellow": [39]}, 7)
    assert s.action_to_string(FWD(0)) == "red pawn 0: 14 -> 21, bumps blue pawn 0"
    s11 = at({"red": [14, St, St, St], "blue": [39]}, 11)
    assert s11.action_to_string(SWAP(0, "blue", 0)) == "swap pawn 0 with blue pawn 0 (14 <-> 39), slide to 43"
    assert s11.string_to_action("swap pawn 0 with blue pawn 0") == SWAP(0, "blue", 0)
    assert at({"red": [30, St, St, St]}, 10).action_to_string(BACK(0)) == "red pawn 0: 30 -> 29 (back 1)"
    sorry = at({"red": [St], "blue": [31]}, 13)
    assert sorry.action_to_string(SORRY("blue", 0)) == "sorry! blue pawn 0 on 31, slide to 34"
    assert s.action_to_string(PASS) == "pass"
    assert G4.new_initial_state().action_to_string(13) == "draw sorry!"
    assert G4.new_initial_state().string_to_action("draw 11") == 11
    assert G4.new_initial_state().string_to_action("Draw Sorry") == 13
    for state in (s, s11):
        for a in state.legal_actions():
            assert state.string_to_action(state.action_to_string(a)) == a
    with pytest.raises(InvalidActionError):
        s.string_to_action("fly away")
    with pytest.raises(InvalidActionError):
        s.action_to_string(6)                     # there are no 6s


def test_observation_and_board() -> None:
    obs = games.load("sorry(players=4,seed=1)").new_initial_state().observation()
    assert len(obs["pawns"]) >= 4 and all(p == -1 for row in obs["pawns"] for p in row)
    assert obs["card"] is None and sum(obs["draw_pile"].values()) == 45 and obs["current_player"] == CHANCE
    json.dumps(obs)
    s = at({"red": [14, S2, H], "blue": [21]}, 11)
    obs = s.observation()
    assert obs["card"] == 11 and obs["pawns"][0] == [14, 62, HOME, START]
    board = str(s)
    assert "R0" in board and "R1" in board and "B0" in board and "plays card 11" in board
    assert "player 0 red" in board and "START 1" in board and "HOME 1" in board


def test_action_ids_are_disjoint_from_cards() -> None:
    state = G4.new_initial_state()
    assert state.n_actions == G4.num_distinct_actions() == 175
    rng = random.Random(2)
    decisions, draws = set(), set()
    for _ in range(3):
        state = G4.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            (draws if state.is_chance_node() else decisions).update(legal)
            state.apply_action(rng.choice(legal))
    assert draws == set(FULL_DECK)
    assert not (decisions & draws) and min(decisions) == 0


# ----- invariants over many random games -----------------------------------------------------------------
def _check_invariants(state: SorryState, game: SorryGame) -> None:
    obs = state.observation()
    ppp = game.param("pawnsPerPlayer")
    track: set[int] = set()
    for row in obs["pawns"]:
        assert len(row) == ppp and all(-1 <= p <= 65 for p in row)
        on_track = [p for p in row if 0 <= p < 60]
        safety = [p for p in row if 60 <= p < 65]
        assert len(set(safety)) == len(safety), row
        assert not track & set(on_track), obs
        track |= set(on_track)
        assert len(set(on_track)) == len(on_track)
    pile = obs["draw_pile"]
    assert sum(pile.values()) == obs["draw_pile_size"] and all(0 <= v for v in pile.values())
    assert pile["1"] <= 5 and all(v <= 4 for k, v in pile.items() if k != "1")


@pytest.mark.parametrize("spec,n_games", [("sorry(players=2)", 40), ("sorry(players=3,pawnsPerPlayer=3)", 25),
                                          ("sorry(players=4,sorryFwd4=true,swapVictimSlides=true)", 25)])
def test_invariants_over_random_games(spec: str, n_games: int) -> None:
    game: SorryGame = games.load(spec)  # type: ignore[assignment]
    rng = random.Random(spec)
    for _ in range(n_games):
        state = game.new_initial_state()
        while not state.is_terminal():
            _check_invariants(state, game)
            legal = state.legal_actions()
            if state.is_chance_node():
                state.apply_action(rng.choice(legal))
                continue
            obs = state.observation()
            card, me = obs["card"], obs["turn"]
            assert legal and (legal == [PASS] or PASS not in legal or card == 11)
            if card == 11 and PASS in legal:
                assert not any(15 <= a < 19 for a in legal)   # decline only without a forward 11
            splits = [a for a in legal if 23 <= a < 95]
            if splits:
                outcomes = [json.dumps(state._simulate(a)) for a in splits]
                assert len(set(outcomes)) == len(outcomes), "equal-outcome 7-splits must be deduplicated"
            action = rng.choice(legal)
            predicted = state._simulate(action)
            before = state._positions()
            state.apply_action(action)
            assert state._positions() == predicted
            mine = game.colours()[me]
            for c in range(4):
                for k in range(4):
                    if c != mine and before[c][k] != predicted[c][k]:
                        # Another colour's pawn only goes back to START, or is swapped onto the mover's
                        # square.
                        assert predicted[c][k] == START or (card == 11 and predicted[c][k] in before[mine]) \
                            or (card == 11 and game.param("swapVictimSlides")), (before, predicted, action)
            if state.is_terminal():
                assert all(p == HOME for p in state.observation()["pawns"][me])
        _check_invariants(state, game)


# ----- parity with the plain-Python model of the rules ---------------------------------------------------
@pytest.mark.parametrize("spec,n_games", [("sorry(players=2)", 12), ("sorry(players=3)", 8),
                                          ("sorry(players=4,sorryFwd4=true,swapVictimSlides=true)", 8)])
def test_options_match_the_reference_model(spec: str, n_games: int) -> None:
    from games.sorry import reference

    game: SorryGame = games.load(spec)  # type: ignore[assignment]
    in_play = [c in game.colours() for c in range(4)]
    rng = random.Random(spec)
    checked = 0
    for _ in range(n_games):
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            if not state.is_chance_node():
                obs = state.observation()
                colour = game.colours()[obs["turn"]]
                expected = reference.options(state._positions(), colour, obs["card"], in_play,
                                             game.param("sorryFwd4"), game.param("swapVictimSlides"))
                assert legal == list(expected), (state._positions(), obs["card"])
                for a in legal:
                    assert state._simulate(a) == expected[a], (state._positions(), obs["card"], a)
                checked += 1
            state.apply_action(rng.choice(legal))
    assert checked > 100 * n_games


def _random_position(rng: random.Random, colours: tuple[int, ...]) -> list[list[int]]:
    pos = [[HOME] * 4 for _ in range(4)]
    taken: set[int] = set()
    for c in colours:
        safety: set[int] = set()
        for k in range(4):
            kind = rng.random()
            if kind < 0.2:
                pos[c][k] = START
            elif kind < 0.3:
                pos[c][k] = HOME
            elif kind < 0.45 and len(safety) < 5:
                pos[c][k] = rng.choice(sorted({60, 61, 62, 63, 64} - safety))
                safety.add(pos[c][k])
            else:
                pos[c][k] = rng.choice(sorted(set(range(60)) - taken))
                taken.add(pos[c][k])
    return pos


@pytest.mark.parametrize("players,flags", [(4, ""), (3, ",sorryFwd4=true,swapVictimSlides=true"), (2, "")])
def test_options_match_the_reference_model_on_random_positions(players: int, flags: str) -> None:
    from games.sorry import reference

    game: SorryGame = games.load(f"sorry(players={players}{flags})")  # type: ignore[assignment]
    colours = game.colours()
    in_play = [c in colours for c in range(4)]
    rng = random.Random(players)
    cards = [1, 2, 3, 4, 5, 7, 7, 7, 8, 10, 11, 11, 12, 13, 13]
    for _ in range(700):
        pos = _random_position(rng, colours)
        player = rng.randrange(players)
        card = rng.choice(cards)
        state = game.position({c: pos[c] for c in colours}, to_move=player, card=card)
        expected = reference.options(pos, colours[player], card, in_play,
                                     game.param("sorryFwd4"), game.param("swapVictimSlides"))
        assert state.legal_actions() == list(expected), (pos, player, card)
        for a, result in expected.items():
            assert state._simulate(a) == result, (pos, player, card, a)
