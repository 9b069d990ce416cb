"""The Old Maid table: who decides what (docs/architecture.md "Old Maid: who decides what").

- ``referee/``: the rules as the table referees them, pure: ``rules.TableGame``, composed
  of the game's facts (``facts``), its checks of hands it never sees (``scrutiny``) and
  its answers to what players report about one another and ``accuse`` (``reports``,
  ``accusations``); its vocabulary (``events``), seat arithmetic (``seats``), what a
  stalled game's abort says (``stalls``).
- ``verified/``: a verified game (protocol 14.6): the ledger of every card and who lied
  (``ledger``, fed ``entries``), a picker's refused card weighed (``refusals``), the table's
  side of it (``play``), and its timers (``game``).
- ``table/``: the Trio server around them: ``ring table`` and ``serve_tables``
  (``server``), the connections (``connections``), one game's players and end
  (``game``), its records (``records``), its configuration (``config``), how it ended
  (``outcome``).
- ``service.py``: the table declared for ``ring serve`` and ``ring table``.
"""
