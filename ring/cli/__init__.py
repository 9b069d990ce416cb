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

from ring.wire.lazy import exporter

# What the layers above use, and the module each comes from (loaded when first asked for).
_BY_MODULE = {
    "ring.cli.app": ("main",),
    "ring.cli.registry": ("Command", "ServeSettings", "Service"),
}
_EXPORTS = {name: module for module, names in _BY_MODULE.items() for name in names}
__all__ = sorted(_EXPORTS)

__getattr__ = exporter(__name__, _EXPORTS, globals())
