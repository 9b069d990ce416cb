"""Multi-process scenarios and their verifier."""
