"""The Old Maid table over TCP: a thin Trio layer around the referee (``server``: ``ring
table`` and ``serve_tables``; ``connections``, ``game``, ``records``, ``config``,
``outcome``)."""
