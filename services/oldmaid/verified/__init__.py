"""A verified Old Maid game (docs/protocols/oldmaid.md 14.6): the table's ledger of every card,
fed by the players' reports, and the verdicts and timers it keeps."""
