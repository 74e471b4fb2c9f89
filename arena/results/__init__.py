"""What a game's result is: who won and why, the record of a game, one numbering of its moves."""
