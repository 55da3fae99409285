"""A real Redis Cluster on loopback -- six ``redis-server --cluster-enabled yes`` nodes, three
primaries and three replicas -- for the tests that need one.

Import as ``from realcluster import own_cluster, redis_cluster`` (``tests/`` is on pytest's
``pythonpath``). The nodes run in a temp dir on free loopback ports (each with its cluster
bus port), ``redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`` joins them,
and the fixture waits until every node says ``cluster_state:ok``, agrees on who serves each
slot and every replica is in sync; it skips, saying so, where ``redis-server`` or
``redis-cli`` is not installed (:mod:`parts`). ``cluster-node-timeout`` is one second, so a
killed primary's replica takes over within about two. :meth:`Cluster.kill_primary` kills
(SIGKILL) the primary serving a key and waits for the failover; :meth:`Cluster.move_slot`
migrates a slot, keys and all, to another primary (what ``redis-cli --cluster reshard``
does, for one slot).
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from parts import program
from realredis import free_port, server_pid

NODES = 6
NODE_TIMEOUT_MS = 1000  # a primary unreachable this long is failing: its replica takes over


def admin(port: int) -> Any:
    """A plain redis-py client of one node (admin commands, never routed)."""
    import redis

    return redis.Redis(host="127.0.0.1", port=port, decode_responses=True,
                       socket_timeout=5, socket_connect_timeout=2)


class Node:
    """One ``redis-server --cluster-enabled yes`` on 127.0.0.1 (files in ``tmp``)."""

    def __init__(self, binary: str, tmp: Path) -> None:
        self.binary = binary
        self.tmp = tmp
        self.port = free_port()
        self.bus = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start on ``self.port`` (fresh ports when another process took one meanwhile)."""
        for _attempt in range(3):
            self.tmp.mkdir(parents=True, exist_ok=True)
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--cluster-enabled", "yes", "--cluster-port", str(self.bus),
                 "--cluster-config-file", str(self.tmp / "nodes.conf"),
                 "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                 "--cluster-replica-validity-factor", "0",  # a replica may always take over
                 "--cluster-allow-replica-migration", "no",
                 "--dir", str(self.tmp), "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while server_pid(self.port) != self.proc.pid:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            else:
                return
            self.kill()
            (self.tmp / "nodes.conf").unlink(missing_ok=True)
            self.port, self.bus = free_port(), free_port()
        raise RuntimeError(f"redis-server --cluster-enabled did not start on port {self.port}")

    def start_again(self) -> None:
        """Start a node that was killed, on its ports and with its cluster config."""
        assert not self.alive
        ports = self.port, self.bus
        self.start()
        if (self.port, self.bus) != ports:
            raise RuntimeError(f"port {ports[0]} was taken meanwhile: the node cannot rejoin")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown, connections cut, nothing more replicated."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP: the node reads nothing more (what it was sent waits in its socket)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)


class Cluster:
    """Six nodes, three primaries with a replica each (see the module doc)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.nodes = [Node(program("redis-server"), tmp / f"node{n}") for n in range(NODES)]

    @property
    def url(self) -> str:
        """A ``redis+cluster://`` URL naming three of the nodes (any one would do)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes[:3])

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes if node.alive]

    def start(self) -> None:
        cli = program("redis-cli")
        for node in self.nodes:
            node.start()
        done = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {done.stdout[-2000:]}"
                               f"{done.stderr[-2000:]}")
        self.wait_ok()

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()

    def flush(self) -> None:
        for port in self.primaries():
            with admin(port) as client:
                client.flushall()

    # -- what the nodes say ------------------------------------------------------------
    def shards(self, port: int | None = None) -> dict[tuple[int, int], int]:
        """``(first slot, last slot) -> primary port``, as node ``port`` (any live one) sees it."""
        with admin(port or self.ports[0]) as client:
            slots = client.execute_command("CLUSTER", "SLOTS")
        return {(int(r[0]), int(r[1])): int(r[2][1]) for r in slots}

    def primaries(self) -> list[int]:
        return sorted(set(self.shards().values()))

    def replicas(self) -> list[int]:
        return [port for port in self.ports if port not in self.primaries()]

    def slot(self, key: str) -> int:
        with admin(self.ports[0]) as client:
            return int(client.execute_command("CLUSTER", "KEYSLOT", key))

    def primary_of(self, key: str) -> int:
        """The port of the primary serving ``key``'s slot."""
        slot = self.slot(key)
        return next(port for (low, high), port in self.shards().items() if low <= slot <= high)

    def node(self, port: int) -> Node:
        return next(node for node in self.nodes if node.port == port)

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Every live node: ``cluster_state:ok``, the same slot map (live primaries only),
        all 16384 slots covered; every live replica's link to its primary up."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = self._state()
                if last is True:
                    return
            except Exception as exc:  # a node still starting, or just killed
                last = exc
            time.sleep(0.05)
        raise RuntimeError(f"the cluster did not settle: {last!r}")

    def _state(self) -> Any:
        maps = []
        for port in self.ports:
            with admin(port) as client:
                info = client.execute_command("CLUSTER", "INFO")
                if "cluster_state:ok" not in info:
                    return f"{port}: {info.splitlines()[0]}"
                replication = client.info("replication")
                if replication.get("role") == "slave" \
                        and replication.get("master_link_status") != "up":
                    return f"{port}: replica link down"
            maps.append(self.shards(port))
        if any(m != maps[0] for m in maps):
            return "the nodes disagree on the slot map"
        if sum(high - low + 1 for low, high in maps[0]) != 16384:
            return "slots uncovered"
        if not set(maps[0].values()) <= set(self.ports):
            return "a dead node still serves slots"
        return True

    # -- breaking and moving things ----------------------------------------------------
    def kill_primary(self, key: str, *, wait: bool = True) -> int:
        """SIGKILL the primary serving ``key``; with ``wait``, until its replica took over.
        Returns the killed node's port."""
        port = self.primary_of(key)
        self.node(port).kill()
        if wait:
            self.wait_failover(key, port)
        return port

    def replica_of(self, port: int) -> int:
        """The port of the replica of primary ``port``."""
        with admin(port) as client:
            replicas = client.execute_command("CLUSTER", "REPLICAS",
                                              client.execute_command("CLUSTER", "MYID"))
        line = next(line for line in replicas if "fail" not in line.split()[2])
        return int(line.split()[1].split("@")[0].rsplit(":", 1)[1])

    def revive(self, port: int) -> None:
        """Start killed node ``port`` again (same port, same nodes.conf): it rejoins as a
        replica of the node that took over its slots; until the cluster settled."""
        self.node(port).start_again()
        self.wait_ok()

    def wait_failover(self, key: str, dead: int, timeout: float = 30.0) -> int:
        """Until a live node serves ``key``'s slot (and the cluster is ok); its port."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with suppress(Exception):
                now = self.primary_of(key)
                if now != dead and self._state() is True:
                    return now
            time.sleep(0.05)
        raise RuntimeError(f"no replica took over from {dead}")

    def move_slot(self, slot: int, to: int) -> None:
        """Migrate ``slot`` and its keys to primary ``to`` (IMPORTING/MIGRATING, MIGRATE,
        then SETSLOT NODE on every primary), as ``redis-cli --cluster reshard`` does."""
        source = next(port for (low, high), port in self.shards().items() if low <= slot <= high)
        if source == to:
            return
        with admin(source) as src, admin(to) as dst:
            src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command(
                "CLUSTER", "MYID")
            dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
            src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
            while True:
                keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)
                if not keys:
                    break
                src.execute_command("MIGRATE", "127.0.0.1", to, "", 0, 5000, "KEYS", *keys)
            for port in self.primaries():
                with admin(port) as client:
                    client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
        self.wait_ok()


@contextmanager
def running(tmp: Path) -> Iterator[Cluster]:
    """A started cluster in ``tmp`` for the block (the test skips without redis-server/-cli)."""
    program("redis-server")
    program("redis-cli")
    cluster = Cluster(tmp)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster shared by the tests that break nothing (one per pytest-xdist worker)."""
    with running(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture()
def own_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of this test alone (for tests that kill a node or move a slot)."""
    with running(tmp_path) as cluster:
        yield cluster


@pytest.fixture()
def cluster_url(redis_cluster: Cluster) -> str:
    """The shared cluster's URL, every primary flushed for this test."""
    redis_cluster.wait_ok()
    redis_cluster.flush()
    return redis_cluster.url
