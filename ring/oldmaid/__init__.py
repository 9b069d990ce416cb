"""Old Maid: cards, messages, the link protocol and the peer."""

# Where a table listens by default (``ring table``, ``ring serve --oldmaid``). Here, in the
# package, so that declaring the service loads nothing more.
DEFAULT_PORT = 9898
