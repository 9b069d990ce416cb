"""cardring: a peer-to-peer Old Maid ring and card-game tables on one Trio transport."""

__version__ = "0.1.0"
