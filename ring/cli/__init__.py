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

# What the layers above use, and the module each comes from.
_EXPORTS = {
    "Command": "ring.cli.registry",
    "ServeSettings": "ring.cli.registry",
    "Service": "ring.cli.registry",
    "main": "ring.cli.app",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    # Loaded when first asked for (PEP 562), so that importing one module of this
    # package does not import them all: a peer's start stays as quick as before.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
