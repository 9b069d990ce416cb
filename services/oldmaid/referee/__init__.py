"""The Old Maid rules as the table referees them: pure state, no I/O, no clock.

``rules.TableGame`` is composed of the game's facts (``facts``), the checks of
claims about hands the table never sees (``scrutiny``) and the answers to
reports and accusations (``reports``, ``accusations``)."""
