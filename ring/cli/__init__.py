"""The ``ring`` command, built from what the packages above declare.

- ``app``: ``main``, the command line (``ring peer`` and the declared
  commands); ``registry``: what the packages above declare (services for
  ``ring serve``, commands); ``serve``: ``ring serve``'s services in one
  process.
- ``cliargs``, ``client_args``: argument types, and the arguments every
  game's ``ring play`` and ``ring bot`` share.
- ``shutdown``: how a long-running command stops; ``console``: the
  operator's lines, which must never stop a server.
"""

from ring.cli.app import main
from ring.cli.registry import Command, ServeSettings, Service

__all__ = ["Command", "ServeSettings", "Service", "main"]
