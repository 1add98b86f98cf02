# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.telemetry -- the client of a DPDK telemetry v2 socket, the one the
lab's nodes and the benchmarks' managers are asked through.

DPDK's telemetry socket is a SOCK_SEQPACKET Unix socket in the process's
runtime directory (/var/run/dpdk/<file prefix>/dpdk_telemetry.v2 for root):
it greets each connection with one JSON message, then answers every command
with one JSON message, {"<command>": <value>}, where a command the process
has not registered (yet) has the value null.

tools/onvm-exporter keeps a client of its own: it is deployed as that one
file (examples/systemd/onvm-exporter.service runs it installed as
/usr/local/bin/onvm-exporter, without the tree), so it cannot import this
package, and it asks under a time budget per node and counts bad replies,
which the lab has no use for.
"""
import json
import os
import socket

RUNTIME_ROOT = "/var/run/dpdk"  # DPDK's runtime directories (root's)


def socket_path(prefix):
    """The telemetry socket of the DPDK process with file prefix `prefix`."""
    return os.path.join(RUNTIME_ROOT, prefix, "dpdk_telemetry.v2")


class NotSent(ConnectionError):
    """query(once=True): the command never reached the manager (no
    connection): it did not run."""


class Telemetry:
    """Client of a DPDK telemetry v2 socket (SOCK_SEQPACKET, one JSON reply per command)."""

    def __init__(self, path):
        self.path = path
        self.sock = None

    def _connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(self.path)
        json.loads(s.recv(1 << 16).decode())  # greeting
        self.sock = s

    def query(self, cmd, once=False):
        """The value of `cmd`'s reply (None: not registered).  A broken
        connection is made again once; OSError, ValueError (not JSON) or
        ConnectionError if that fails too.  `once`: a command that must
        not run twice is not sent again once it was sent (a lost answer
        raises: it may have run)."""
        for attempt in (0, 1):
            sent = False
            try:
                if self.sock is None:
                    self._connect()
                self.sock.send(cmd.encode())
                sent = True
                reply = self.sock.recv(1 << 20)
                if not reply:
                    raise ConnectionError("telemetry socket closed")
                doc = json.loads(reply.decode())
                return doc[cmd.split(",")[0]]
            except (OSError, ValueError, ConnectionError) as e:
                self.close()
                if once and sent:
                    raise
                if attempt == 1:
                    raise (NotSent(str(e)) if once else e)

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
