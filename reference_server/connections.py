"""How many connections the listeners hold, and for how long: Kafka's ``ConnectionQuotas`` and the
idle expiry of its ``Selector``, plus a cap derived from the open-file limit.

* ``max.connections`` caps the connections of the node, ``max.connections.per.ip`` (and its
  ``max.connections.per.ip.overrides``) those from one address. A connection over one of these caps is
  closed right after it is accepted, with one log line (Kafka's acceptor closes a connection over the
  per-address cap the same way).
* The open-file limit (``RLIMIT_NOFILE``) caps them too: ``DESCRIPTOR_RESERVE`` descriptors are kept
  for the metadata log, its snapshots and the node's own connections to other controllers, so that
  client connections can never take the descriptors the raft driver needs. At that cap a new
  connection closes the least recently active idle one (as Kafka does for its protected listener)
  rather than being refused, so an administrator still gets in while idle connections pile up; only
  when every connection is busy is the new one refused. The cap is logged at start-up.
* The caps apply to every listener, the controller listeners included (Kafka protects only the
  inter-broker listener, which a controller does not have). So that a configured cap does not lock the
  node out of its own quorum, ``QUORUM_SLOTS`` connections beyond the caps are let in on probation on
  a controller listener: one stays only if its first request, within ``PROBATION_MS``, comes from a
  raft client (client id ``raft-client-<node id>``, what Kafka's and this project's controllers send)
  or from a controller registering itself (``controller-registration-<node id>``, this project's
  controllers; Kafka's send their node id, which is no sign of a controller).
* A connection with no request in progress and nothing received for ``connections.max.idle.ms`` is
  closed (a negative value disables this).
"""

from __future__ import annotations

import logging
import os
import resource
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

INT32_MAX: Final = (1 << 31) - 1
DESCRIPTOR_RESERVE: Final = 64
"""Descriptors kept free of client connections: log segments and their indexes (the active ones, a
roll, reads), snapshots being written or sent, quorum-state and checkpoint files being replaced, the
node's outbound connections to the other controllers, and the quorum slots below."""
QUORUM_SLOTS: Final = 16
"""Connections a controller listener lets in beyond the caps, on probation, so a voter can reconnect."""
PROBATION_MS: Final = 1000
"""How long a connection on probation has to send its first request."""
RAFT_CLIENT_PREFIX: Final = "raft-client-"
REGISTRATION_CLIENT_PREFIX: Final = "controller-registration-"
"""The client id of a controller's ControllerRegistration connection, then its node id."""
NOTE_INTERVAL_S: Final = 10.0
"""A refused or evicted connection is logged at most this often; those in between are counted."""

log = logging.getLogger("kafka.network.ConnectionQuotas")


@dataclass(frozen=True)
class ConnectionLimits:
    """The configured caps and idle timeout; ``per_ip_overrides`` is keyed by IP address text."""

    max_connections: int = INT32_MAX
    max_connections_per_ip: int = INT32_MAX
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    max_idle_ms: int = 600_000

    def cap_for(self, ip: str) -> int:
        return self.per_ip_overrides.get(ip, self.max_connections_per_ip)


def descriptor_room(reserve: int = DESCRIPTOR_RESERVE) -> tuple[int, int] | None:
    """(soft ``RLIMIT_NOFILE``, connections that leave ``reserve`` descriptors free beside those open
    now), or None when the limit is infinite."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    open_now = len(os.listdir("/dev/fd")) - 1  # listing the directory opened one more
    return soft, max(soft - open_now - reserve, 0)


@dataclass(eq=False)
class Connection:
    """One accepted connection: what it counts against, when it last did something, how to close it."""

    peer: str
    """``/<ip>:<port>``, for log lines."""
    ip: str
    close: Callable[[], None]
    on_probation: bool = False
    """Let in beyond the caps; holds a quorum slot until its first request shows a raft client."""
    refusal: str = ""
    """Why a connection on probation was over the caps (logged if it fails the probation)."""
    busy: bool = False
    """A request is being answered: the connection is not idle, however long that takes."""
    last_active: float = field(default_factory=time.monotonic)


class ConnectionQuotas:
    """Counts the open connections and decides which new ones are let in."""

    def __init__(self, node_id: int, limits: ConnectionLimits, room: tuple[int, int] | None) -> None:
        self.node_id = node_id
        self.limits = limits
        self.descriptor_cap = room[1] if room is not None and room[1] < limits.max_connections else None
        """Connections the open-file limit leaves room for; None when it is not below max.connections."""
        self._counted: set[Connection] = set()
        self._quorum: set[Connection] = set()
        self._per_ip: Counter[str] = Counter()
        self._unlogged = 0
        self._last_note = -NOTE_INTERVAL_S
        if room is not None and self.descriptor_cap is not None:
            log.info("%s Accepting at most %d connections: the open-file limit is %d and %d descriptors are "
                     "kept for the metadata log, snapshots and quorum connections (max.connections=%d)",
                     self.prefix, self.descriptor_cap, room[0], DESCRIPTOR_RESERVE, limits.max_connections)

    @property
    def prefix(self) -> str:
        return f"[SocketServer listenerType=CONTROLLER, nodeId={self.node_id}]"

    def admit(self, peer: str, ip: str, close: Callable[[], None], *,
              quorum_listener: bool) -> Connection | None:
        """The new connection, counted (evicting the least recently active idle one at the open-file
        cap); None when it is refused, after closing it and logging why."""
        connection = Connection(peer, ip, close)
        refusal = self._refusal(ip)
        if refusal is None and self.descriptor_cap is not None and len(self._counted) >= self.descriptor_cap:
            refusal = self._evict_for(peer)
        if refusal is None:
            self._counted.add(connection)
            self._per_ip[ip] += 1
            return connection
        if quorum_listener and len(self._quorum) < QUORUM_SLOTS:
            connection.on_probation = True
            connection.refusal = refusal
            self._quorum.add(connection)
            return connection
        self.refuse(connection, refusal)
        return None

    def _refusal(self, ip: str) -> str | None:
        limit = self.limits.max_connections
        if len(self._counted) >= limit:
            return f"the node already has the configured maximum of {limit} connections (max.connections)"
        cap = self.limits.cap_for(ip)
        if self._per_ip[ip] >= cap:
            return f"address already has the configured maximum of {cap} connections"
        return None

    def _evict_for(self, peer: str) -> str | None:
        """Close the least recently active idle connection to make room; why not when none is idle."""
        victim = min((c for c in self._counted if not c.busy), key=lambda c: c.last_active, default=None)
        if victim is None:
            return (f"the open-file limit leaves room for {self.descriptor_cap} connections and every one is "
                    "busy")
        self._note(f"Closing the least recently active connection, from {victim.peer}, to make room for "
                   f"{peer}: the open-file limit leaves room for {self.descriptor_cap} connections")
        self.release(victim)
        victim.close()
        return None

    def passes_probation(self, connection: Connection, client_id: str | None) -> bool:
        """A connection on probation whose first request is from ``client_id`` stays if that is a raft
        client or a controller registering (it keeps its quorum slot); True for any connection not on
        probation."""
        if not connection.on_probation:
            return True
        if client_id is not None and client_id.startswith((RAFT_CLIENT_PREFIX, REGISTRATION_CLIENT_PREFIX)):
            connection.on_probation = False
            return True
        return False

    def refuse(self, connection: Connection, reason: str) -> None:
        """Close a connection over the caps and say why (Kafka's words)."""
        self.release(connection)
        connection.close()
        self._note(f"Rejected connection from {connection.peer}, {reason}.")

    def release(self, connection: Connection) -> None:
        if connection in self._counted:
            self._counted.discard(connection)
            self._per_ip[connection.ip] -= 1
            if self._per_ip[connection.ip] <= 0:
                del self._per_ip[connection.ip]
        self._quorum.discard(connection)

    def _note(self, message: str) -> None:
        """Log at INFO, at most once per ``NOTE_INTERVAL_S``; the lines skipped are counted in the next."""
        now = time.monotonic()
        if now - self._last_note < NOTE_INTERVAL_S:
            self._unlogged += 1
            return
        more = (f" ({self._unlogged} similar connection events since the last such line)" if self._unlogged
                else "")
        log.info("%s %s%s", self.prefix, message, more)
        self._unlogged = 0
        self._last_note = now

    def close_idle(self, now: float) -> float:
        """Close the connections idle for longer than ``connections.max.idle.ms`` (Kafka's Selector
        says so at DEBUG level, in these words); the seconds until the next one could be."""
        limit = self.limits.max_idle_ms / 1000
        oldest = now
        for connection in [*self._counted, *self._quorum]:
            if connection.busy:
                continue
            if now - connection.last_active > limit:
                log.debug("%s About to close the idle connection from %s due to being idle for %d millis",
                          self.prefix, connection.peer, (now - connection.last_active) * 1000)
                self.release(connection)
                connection.close()
            else:
                oldest = min(oldest, connection.last_active)
        return max(oldest + limit - now, 0.0) + 0.001
