"""``localhost`` works whichever address a client tries first (issue 45): every service of
one ``ring serve`` listens on 127.0.0.1 and on ::1, the same port, and a client that
connects to one address only plays a whole game on each, over either.

Real processes: ``ring serve`` and our own clients (``ring bot``, ``ring peer``), each
given the one address (``[::1]:PORT`` or ``127.0.0.1:PORT``), which it dials alone.
"""

from __future__ import annotations

import socket
import subprocess

import pytest

from ring.wire.net import has_ipv6_loopback
from tests.helpers.ring_serve_process import WAIT, ring, ring_serve

SERVICES = ("fishnet", "notipping", "oldmaid", "reversi", "web")


def clients(service: str, address: str) -> list[list[str]]:
    """Command lines that play one game of ``service`` against ``address`` alone."""
    if service == "fishnet":
        return [ring("bot", "fishnet", "--server", address, "--name", "ann", "--level", "spot",
                     "--opponent", "spot")]  # fmt: skip
    if service == "reversi":
        return [ring("bot", "reversi", "--server", address, "--name", name, "--level", "random")
                for name in ("ann", "bob")]  # fmt: skip
    if service == "notipping":
        seats = (("ann", "0"), ("bob", "1"))
        return [ring("bot", "notipping", "--server", address, "--name", name, "--seat", seat,
                     "--level", "random") for name, seat in seats]  # fmt: skip
    assert service == "oldmaid"
    return [ring("peer", "--server", address, "--name", name) for name in ("ann", "bob")]


def fetch_page(host: str, port: int) -> bytes:
    with socket.create_connection((host, port), timeout=WAIT) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        return sock.recv(64)


@pytest.mark.skipif(not has_ipv6_loopback(), reason="this machine has no IPv6 loopback")
@pytest.mark.parametrize("host", ["::1", "127.0.0.1"])
def test_a_client_that_dials_one_address_plays_a_game_on_every_service(host: str) -> None:
    words = [f"--{service}=0" for service in SERVICES]
    with ring_serve(*words, "--players", "2", "--seed", "3", services=len(SERVICES)) as served:
        ports = {name: int(address.rpartition(":")[2]) for name, address in served.items()}
        assert fetch_page(host, ports["web"]).startswith(b"HTTP/1.1 200")
        address = f"[{host}]:{{}}" if ":" in host else f"{host}:{{}}"
        games = {
            service: [
                subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for argv in clients(service, address.format(ports[service]))
            ]
            for service in SERVICES
            if service != "web"
        }
        for service, processes in games.items():
            for process in processes:
                _, errors = process.communicate(timeout=WAIT)
                assert process.returncode == 0, (service, host, errors.decode()[-500:])
