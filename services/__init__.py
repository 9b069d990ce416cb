"""Table services: the Old Maid table and, later, the game tables."""
