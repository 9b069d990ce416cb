"""Reversi (Othello): rules, protocol, server, bots and clients (docs/protocols/reversi.md)."""

# Where the course's Reversi server listens, and so ours and its clients by default. Here,
# in the package, so that declaring the service (service.py) loads nothing more.
DEFAULT_PORT = 5410
