"""The loopback port a server listens on: a free one picked, one in use found, who holds it."""

from __future__ import annotations

import socket

import psutil

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
        return False


def holder_of(port: int) -> str:
    """Who listens on a loopback port, as far as this user may see (`pid 123 python3`)."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError):
        connections = []
    for conn in connections:
        if (
            conn.status == psutil.CONN_LISTEN
            and conn.laddr
            and conn.laddr.port == port
            and conn.pid
        ):
            try:
                return f"pid {conn.pid} {psutil.Process(conn.pid).name()}"
            except psutil.Error:
                return f"pid {conn.pid}"
    return "a process of another user"
