"""The keeper of one box's network: a network namespace, and sockets made inside it.

Run by ``scenarios.sandbox.network`` as root, as its own process (``python -I
this-file``: the standard library only, nothing of ours imported), with one
end of a Unix socket pair as the file descriptor its argument names. It moves itself into a new
network namespace (only a loopback interface, which it brings up), then
answers requests on it until that closes:

- ``L <host> <port>\\n``: a TCP socket bound to (host, port) inside the
  namespace and listening; the reply carries it (SCM_RIGHTS). Port 0: any.
- ``S <family>\\n``: a TCP socket of that family (2 or 10), not connected: the
  runner connects it itself, and the connection is made inside the namespace.

Each reply is ``ok\\n`` with the socket, or ``error <why>\\n``. The runner then
starts each program of the box *in* this namespace, so a program reaches what
is listening here and nothing of the machine. The agent is the namespace's
keeper: the runner needs a live process to find the namespace by
(``/proc/<agent>/ns/net``), and reads the namespace's TCP table from
``/proc/<agent>/net/tcp`` (who owns a connection). It is not in any box: no
program can see or signal it.
"""

import ctypes
import fcntl
import os
import socket
import struct
import sys

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def enter_new_namespace() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare(CLONE_NEWNET): {os.strerror(error)}")
    # A new namespace's loopback is down: nothing could connect to anything.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def made(request: str) -> socket.socket:
    kind, *args = request.split()
    if kind == "L" and len(args) == 2:
        host, port = args[0], int(args[1])
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        return sock
    if kind == "S" and len(args) == 1:
        return socket.socket(int(args[0]), socket.SOCK_STREAM)
    raise ValueError(f"not a request: {request!r}")


def serve(control: socket.socket) -> None:
    pending = b""
    while True:
        chunk = control.recv(4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                sock = made(line.decode())
            except (OSError, ValueError) as exc:
                control.sendall(f"error {exc}\n".encode())
                continue
            with sock:
                control.sendmsg([b"ok\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                             struct.pack("i", sock.fileno()))])


def main() -> int:
    control = socket.socket(fileno=int(sys.argv[1]))
    try:
        enter_new_namespace()
    except OSError as exc:
        control.sendall(f"error {exc}\n".encode())
        return 1
    control.sendall(b"ready\n")
    serve(control)
    return 0


if __name__ == "__main__":
    sys.exit(main())
