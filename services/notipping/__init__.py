"""No Tipping: rules, protocol, server, bots and clients (docs/protocols/notipping.md)."""

# Where the course's No Tipping server listens, and so ours and its clients by default.
# Here, in the package, so that declaring the service (service.py) loads nothing more.
DEFAULT_PORT = 10987
