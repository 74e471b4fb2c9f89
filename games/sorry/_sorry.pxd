# Sorry! (classic 45-card game, shared/specs/sorry.md). The whole position is one C struct (Core),
# so a clone or a search reset is a single struct copy.
from games._core cimport CoreState

cdef enum:
    # squares (per colour for the safety zone: two colours can both have a pawn on 60)
    START = -1
    SAFETY0 = 60          # S_i = 60 + i
    HOME = 65
    TRACK = 60
    # cards (also the chance outcome ids of a draw)
    SORRY_CARD = 13
    DECK_SIZE = 45
    # decision action ids (docs/sorry.md)
    A_PASS = 0            # forfeit (empty option list) or the 11 decline
    A_START_OUT = 14      # lowest-index pawn in START -> E_s (cards 1 and 2)
    A_FWD = 15            # + pawn: forward by the card's value (4 for Sorry! with sorryFwd4)
    A_BACK = 19           # + pawn: backward 4 (card 4) or 1 (card 10)
    A_SPLIT = 23          # + (pawnA*3 + j)*6 + (a-1): pawnA +a, then pawnB +(7-a);
                          #   j = pawnB's rank among the pawns other than pawnA
    A_SWAP = 95           # + own*16 + colour*4 + pawn: 11 swap with an opponent pawn on the track
    A_SORRY = 159         # + colour*4 + pawn: Sorry! on that opponent pawn
    N_ACTIONS = 175


cdef struct Board:
    signed char pos[4][4]     # pos[colour][pawn]: START, 0..59, 60..64, HOME (unused pawns sit in HOME)
    signed char sq[60]        # track occupancy: -1, or colour*4 + pawn


cdef struct Core:
    Board b
    int pile[14]              # cards left in the draw pile, by value (1..12, 13 = Sorry!)
    int pile_total
    int card                  # the card being played; 0 = none (a chance node, or the game is over)
    int turn                  # the player (0..n-1) whose turn it is (also at the chance node before a draw)
    int winner                # a player, or -1
    int extra                 # this turn's draw was granted by a 2
    int n_players
    int colour[4]             # player -> board colour
    int in_play[4]            # colour -> 1 if some player plays it
    int two_again             # flag twoDrawsAgain
    int sorry_fwd4            # flag sorryFwd4
    int victim_slides         # flag swapVictimSlides


cdef class SorryState(CoreState):
    cdef Core s
