"""One game, refereed: the game loop over bot objects, the same loop with each bot sandboxed, chance and openings."""
