"""FishNet (two-player Go Fish): the pure rules, and later its protocol and server."""
