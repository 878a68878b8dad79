"""Waiting for a server to be ready: an answer on its port, from a socket its own process tree
listens on."""

from __future__ import annotations

import time

import httpx
import psutil

from benchwatch.measure.ports import HOST, holder_of
from benchwatch.measure.server import BootError, Server


def wait_ready(server: Server, timeout: float, probe_timeout: float = 2.0) -> None:
    """Poll until an answer comes from *our* server: an answer on the port counts only when the
    listening socket belongs to the process tree we started (ports are picked, released and then
    bound, so a neighbour's server can take ours in between and answer for it)."""
    deadline = time.monotonic() + timeout
    url = server.base_url + server.variant.ready_endpoint
    neighbour: str | None = None
    with httpx.Client(timeout=probe_timeout) as client:
        while True:
            code = server.process.poll()
            if code is not None:
                tail = server.stderr_tail()
                if "address already in use" in tail.lower():
                    raise BootError(
                        server.variant.id, f"port {HOST}:{server.port} is already in use", tail
                    )
                raise BootError(server.variant.id, f"server exited with code {code} at boot", tail)
            try:
                client.get(url)
            except httpx.HTTPError:
                pass
            else:
                if listens(server):
                    return
                neighbour = holder_of(server.port)
            if time.monotonic() > deadline:
                if neighbour is not None:
                    raise BootError(
                        server.variant.id,
                        f"another server ({neighbour}) answered on {HOST}:{server.port}, "
                        "not the one benchwatch started",
                        server.stderr_tail(),
                    )
                raise BootError(
                    server.variant.id,
                    f"not ready after {timeout:g}s (no answer on {server.variant.ready_endpoint})",
                    server.stderr_tail(),
                )
            time.sleep(0.1)


def listens(server: Server) -> bool:
    """Whether a process of the server's tree holds the listening socket of its port."""
    for proc in server.process_tree():
        try:
            connections = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue
        if any(
            c.status == psutil.CONN_LISTEN and getattr(c.laddr, "port", None) == server.port
            for c in connections
        ):
            return True
    return False
