"""Measurements and stress drivers, apart from the scenarios that run and verify games.

``python -m scenarios.bench`` (``make bench``) runs the benchmark's parts: the
ring's speed against a loopback ping-pong (``pingpong``), the FishNet ladder
(``fishnet_ladder``), the Reversi and No Tipping benches (``reversi_bench``,
``notipping_bench``, their servers from ``service_pool``), one ``ring serve``
under a class's load (``capacity``, each load a process of ``capacity_load``)
and the table's replies while smarx searches (``stall_bench``). Beside them:
the FishNet strength study (``fishnet_study``, ``make fishnet-study``) and the
hostile byte streams of ``make fuzz`` (``fuzz``).

Nothing in ``scenarios`` outside this package imports it.
"""
