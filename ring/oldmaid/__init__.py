"""Old Maid: cards, messages, the link protocol and the peer."""
