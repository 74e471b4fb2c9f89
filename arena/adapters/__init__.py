"""Bots and games from elsewhere: COMP424 course agents, arena's games inside OpenSpiel."""
