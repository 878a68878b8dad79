"""Loaded into a server only while benchwatch counts it (this folder is put on its PYTHONPATH).

It lets the counting client ask for a full garbage collection between two counted phases, so
every phase begins with the collector in the same state: empty young generations, nothing
pending for a full collection. Without it, where the collector's periodic full passes land is
a matter of which phase they fall in: ±1 % on an endpoint counted 2 requests at a time.

The request comes over a Unix socket (path in BENCHWATCH_COUNTS_GC_SOCKET) to a thread that
sleeps in `recv` the rest of the time: during a phase it runs no instruction and makes no
system call. Each byte received: one `gc.collect()`, then one byte back when it is done.
A sitecustomize the environment has of its own is loaded after this one."""

import gc
import importlib
import os
import socket
import sys
import threading

_PATH = os.environ.pop("BENCHWATCH_COUNTS_GC_SOCKET", "")


def _serve(listener: socket.socket) -> None:
    connection, _ = listener.accept()
    listener.close()
    with connection:
        while connection.recv(1):
            gc.collect()
            connection.sendall(b"k")


def _start() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(_PATH)
    listener.listen(1)
    threading.Thread(target=_serve, args=(listener,), name="benchwatch-counts-gc", daemon=True).start()


def _load_the_environments_own() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    del sys.modules[__name__]
    try:
        importlib.import_module("sitecustomize")
    except ModuleNotFoundError as exc:
        if exc.name != "sitecustomize":
            raise
    finally:
        sys.path[:] = saved


if _PATH:
    _start()
_load_the_environments_own()
