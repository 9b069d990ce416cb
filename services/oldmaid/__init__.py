"""The Old Maid table: referee rules and the Trio server."""
