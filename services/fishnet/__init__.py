"""FishNet (two-player Go Fish): rules, protocol, server, bots and clients
(docs/protocols/fishnet.md)."""

# Where the course's FishNet server listens, and so ours and its clients by default. Here,
# in the package, so that declaring the service (service.py) loads nothing more.
DEFAULT_PORT = 1530
