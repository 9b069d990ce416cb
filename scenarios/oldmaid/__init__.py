"""The Old Maid scenarios: a table and peers as OS processes, and the verifier of their games.

- ``game``: one game as real processes (``ring scenario 8-players``), then
  verified; ``several_games``: G games at once at one table; ``faults``: a
  game interrupted on purpose (``fault_game``), and what each fault must end
  in (``fault_findings``); ``lan``: one game over a LAN of network
  namespaces (``netns``), found by mDNS.
- ``verifier``: what a game left behind (``records``), and the findings over
  it: the handoffs and skips (``turns``, ``handoffs``), the end
  (``outcome``), the claims the table took (``claims``), each a ``Finding``.
"""
