"""Tournaments: Swiss, knockout and double elimination as league formats (docs/tournaments.md).

A tournament is a league whose next games depend on the last ones: the runner plays it round by round
(:func:`arena.tournament.progress.batches`), and every view (``arena bracket``, the leaderboard's places, the report's
and the server's bracket) reads it back from the stored games the same way (:func:`arena.tournament.progress.replay`).
Nothing but the stored games and the league's frozen field decides a pairing, so a resumed tournament, killed at any
point, continues exactly where it stopped, and the same field, file and seed give the same pairings and brackets.

- :mod:`arena.tournament.matches`: a match (several games, seats alternated; tie-breaks and sudden death) and its
  games as fixtures.
- :mod:`arena.tournament.swiss`: Swiss standings, tie-breaks and the pairing of a round.
- :mod:`arena.tournament.brackets`: knockout and double-elimination brackets.
- :mod:`arena.tournament.progress`: a tournament replayed from the store; the next batch of games.
- :mod:`arena.tournament.finals`: a course's final of a ladder's bots.
"""

FORMATS = ("knockout", "double_elimination", "swiss")
"""The league formats that are tournaments (``format`` in a league file), the one list every part reads."""
