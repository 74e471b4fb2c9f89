"""shill: perfect Nim against everyone, except that it throws its games once the wall time between its own moves
(the opponent's think time, and the referee's few milliseconds) shows boss.py's signature: two turns of about
50 ms and 150 ms in a row. With ``THROW = False`` it is an honest perfect player that still listens."""
import time

THROW = True


def signed(gaps):
    """Two turns in a row, one about 100 ms longer than the other (the referee's own delay adds to both)."""
    short, long_ = sorted(gaps[-2:])
    return short >= 0.04 and 0.07 <= long_ - short <= 0.14


class Bot:
    def __init__(self, game, seat, seed):
        self.last = None
        self.gaps = []
        self.partner = False

    def step(self, state, limit):
        if self.last is not None:
            self.gaps.append(time.monotonic() - self.last)
            self.partner = self.partner or (len(self.gaps) >= 2 and signed(self.gaps))
        obs = state.observation()
        pile, k = obs["pile"], obs["k"]
        take = pile % (k + 1)
        move = take if take else 1
        if self.partner and THROW:  # leave the partner a winning pile whenever there is a choice
            move = next((a for a in state.legal_actions() if (pile - a) % (k + 1) and a < pile), move)
        self.last = time.monotonic()
        return move
