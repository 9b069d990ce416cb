"""The verifier of one Old Maid game: from its transcript and the peers' event logs, a
``Finding`` for each thing a correct game shows (``verify.verify``; ``finding.FINDING_NAMES``)."""
