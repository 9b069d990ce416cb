"""A box for every program we did not write: bubblewrap, a uid of its own, its own network.

``Box`` (``box.py``) is what one program sees and who it is;
``BoxNetwork`` (``network.py``) the network namespace its runner listens
in; ``probe`` (``probe.py``) whether this machine can make boxes at all, in
one line. ``scenarios.programs.Program`` runs a program in its ``box``.
"""

from scenarios.sandbox.box import Box, SandboxError, box_processes, exit_status
from scenarios.sandbox.cgroups import BoxGroup, Quota
from scenarios.sandbox.network import BoxNetwork, NetworkError, box_network

__all__ = [
    "Box",
    "BoxGroup",
    "BoxNetwork",
    "NetworkError",
    "Quota",
    "SandboxError",
    "box_network",
    "box_processes",
    "exit_status",
]
