"""Whether this machine can box programs: one real box, asked what it sees.

``probe(uid)`` starts a box (as ``Box`` makes it, with a network namespace
of its own) around a few lines of Python that report their uid, the
processes they can see, whether they can write outside their scratch and
reach the machine's loopback; the answer is one line for the runner to
print, or ``SandboxError`` with the reason (no bubblewrap, not root, no
namespaces), which the runner turns into its refusal.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from scenarios.sandbox import cgroups
from scenarios.sandbox.box import Box, SandboxError, tool

PROBE_TIMEOUT = 10.0
# Run in the box: what it is and what it can reach, as one line of JSON.
INSIDE = """
import json, os, socket, sys
port = int(sys.argv[1])
seen = [p for p in os.listdir("/proc") if p.isdigit()]
try:
    open("/etc/probe", "w")
    writes = True
except OSError:
    writes = False
try:
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
    reaches = True
except OSError:
    reaches = False
print(json.dumps({"uid": os.getuid(), "processes": len(seen), "writes": writes,
                  "reaches": reaches}))
"""


def probe(uid: int) -> str:
    """One line saying what the box is, after checking it on this machine."""
    if sys.platform != "linux":
        raise SandboxError("the box needs Linux (namespaces)")
    if os.geteuid() != 0:
        raise SandboxError(
            "the box needs root, to run each program under a uid of its own "
            "(run the tournament as root, as an autograder's machine does)"
        )
    bwrap = tool("bwrap")
    tool("setpriv")
    version = subprocess.run(
        [bwrap, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT
    ).stdout.strip()
    # Something of the machine's listening on loopback, which the box must not reach.
    with socket.create_server(("127.0.0.1", 0)) as outside:
        port = outside.getsockname()[1]
        box = Box(uid=uid)
        try:
            done = subprocess.run(
                box.command([sys.executable, "-I", "-c", INSIDE, str(port)]),
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT,
                env=box.environment({}),
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise SandboxError(f"a box did not answer within {PROBE_TIMEOUT:g} s") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise SandboxError(f"bubblewrap cannot make a box here: {said}")
    import json

    seen = json.loads(done.stdout)
    wrong = []
    if seen["uid"] != uid:
        wrong.append(f"it ran as uid {seen['uid']}, not {uid}")
    if seen["processes"] > 2:
        wrong.append(f"it saw {seen['processes']} processes")
    if seen["writes"]:
        wrong.append("it could write /etc")
    if seen["reaches"]:
        wrong.append("it reached the machine's loopback")
    if wrong:
        raise SandboxError("the box does not hold: " + "; ".join(wrong))
    grouped = cgroups.available()
    bounded = (
        "a control group bounding its cores, memory and processes together"
        if grouped is None
        else f"no control group ({grouped}): its limits are each process's"
    )
    return (
        f"sandbox: {version or 'bubblewrap'}; each program in a box of its own "
        "(a uid per entrant, its own processes and network, system folders and its own "
        f"folder read-only, a private /tmp; {bounded})"
    )
