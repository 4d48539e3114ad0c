"""A PostgreSQL primary and its hot standby (``pg_basebackup -R``, streaming replication),
started from local binaries on loopback, for failover tests (docs/scaling.md, FO-5, FO-9)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

from ._postgres import _children, _initdb, as_postgres_user, free_port, wait_for

__all__ = ["PostgresPair", "start_pair"]


class PostgresPair:
    """A primary and a standby streaming from it; the primary can be killed, the standby promoted.

    With ``synchronous``, the primary names every standby in
    ``synchronous_standby_names`` (``'*'``): a commit at ``synchronous_commit=on``
    waits until the standby has flushed it. The standby does not carry that setting.
    """

    def __init__(
        self, bindir: Path, prefix: list[str], base: Path, *, synchronous: bool, fsync: bool = False
    ) -> None:
        self.bindir, self.prefix, self.base, self.fsync = bindir, prefix, base, fsync
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports = {"primary": free_port(), "standby": free_port()}
        self.data = {name: base / name for name in self.ports}
        self._run("initdb", "-D", str(self.data["primary"]), "-U", "postgres", "-A", "trust", "-N")
        extra = ["-c", "synchronous_standby_names=*"] if synchronous else []
        self._start("primary", *extra)
        self._run(
            "pg_basebackup",
            *("-h", "127.0.0.1", "-p", str(self.ports["primary"]), "-U", "postgres"),
            *("-D", str(self.data["standby"]), "-R", "-X", "stream", "-c", "fast", "--no-sync"),
        )
        self._start("standby")
        self._wait_streaming(synchronous)

    def url(self, name: str, dbname: str = "postgres") -> str:
        """A URL to one server (``primary`` or ``standby``)."""
        return f"postgresql://postgres@127.0.0.1:{self.ports[name]}/{dbname}"

    def multi_host_url(self, query: str = "") -> str:
        """Both servers in one URL, the one that accepts writes chosen (FO-9)."""
        hosts = ",".join(f"127.0.0.1:{self.ports[n]}" for n in ("primary", "standby"))
        tail = "target_session_attrs=read-write" + (f"&{query}" if query else "")
        return f"postgresql://postgres@{hosts}/postgres?{tail}"

    def kill_primary(self) -> None:
        """SIGKILL the primary's postmaster and every backend: nothing more reaches anyone."""
        proc = self.procs.pop("primary")
        postmaster = self._postmaster("primary")
        if postmaster:
            os.kill(postmaster, signal.SIGSTOP)  # it forks nothing more while its children die
            for pid in [*_children(postmaster), postmaster]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait(10)
        self._remove_shared_memory("primary")

    def promote(self, timeout: float = 30.0) -> None:
        """Promote the standby (``pg_promote``) and return once it accepts writes."""
        url = self.url("standby")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_promote(true, %s)", (int(timeout),))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with psycopg.connect(url, autocommit=True) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
                if row is not None and not row[0]:
                    return
            time.sleep(0.05)
        raise RuntimeError("the standby was not promoted")

    def lag(self) -> int:
        """Bytes of WAL the standby has received but not replayed (0 once caught up)."""
        with psycopg.connect(self.url("standby"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())"
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def pause_replay(self, paused: bool) -> None:
        """Pause (or resume) the standby's replay of WAL: its reads fall behind the primary."""
        with psycopg.connect(self.url("standby"), autocommit=True) as conn:
            conn.execute(
                "SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()"
            )

    def stop(self) -> None:
        """Stop whatever still runs (immediate shutdown) and remove the directories."""
        for name, proc in list(self.procs.items()):
            postmaster = self._postmaster(name)
            if postmaster:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(postmaster, signal.SIGQUIT)
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(30)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.procs.clear()
        shutil.rmtree(self.base, ignore_errors=True)

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [*self.prefix, str(self.bindir / tool), *args], capture_output=True, check=False
        )
        if done.returncode:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.decode()}")

    def _start(self, name: str, *settings: str) -> None:
        port, data = self.ports[name], self.data[name]
        command = [*self.prefix, str(self.bindir / "postgres"), "-D", str(data)]
        command += ["-p", str(port), "-k", str(self.base), "-c", "listen_addresses=127.0.0.1"]
        # Killing processes, not the machine, loses nothing the kernel holds: no fsync needed
        # (the bench asks for it, to time real commits).
        command += ["-c", f"fsync={'on' if self.fsync else 'off'}"]
        log = self.base / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [*command, *settings], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.procs[name] = proc
        wait_for(self.url(name), proc, log, f"the {name} PostgreSQL server")

    def _remove_shared_memory(self, name: str) -> None:
        """Remove the small System V segment a killed postmaster leaves behind (a clean
        shutdown removes it itself); ``postmaster.pid``'s seventh line names it."""
        ipcrm = shutil.which("ipcrm")
        with contextlib.suppress(OSError, IndexError):
            lines = (self.data[name] / "postmaster.pid").read_text().splitlines()
            shmid = lines[6].split()[1]
            if ipcrm is not None and shmid.isdigit():
                subprocess.run([ipcrm, "-m", shmid], capture_output=True, check=False)

    def _postmaster(self, name: str) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data[name] / "postmaster.pid").read_text().split()[0])
        return None

    def _wait_streaming(self, synchronous: bool, timeout: float = 30.0) -> None:
        wanted = "sync" if synchronous else "async"
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.url("primary"), autocommit=True) as conn:
            while time.monotonic() < deadline:
                row = conn.execute("SELECT state, sync_state FROM pg_stat_replication").fetchone()
                if row == ("streaming", wanted):
                    return
                time.sleep(0.05)
        raise RuntimeError(f"the standby is not streaming ({wanted}) from the primary")


@contextlib.contextmanager
def start_pair(*, synchronous: bool = True, fsync: bool = False) -> Iterator[PostgresPair | str]:
    """A running :class:`PostgresPair`, stopped after the block; or, without the binaries
    (``initdb``, ``pg_basebackup``) or a way to run them, why not."""
    found, prefix = _initdb(), as_postgres_user()
    # Where initdb really is (a link on $PATH may stand alone): its siblings are the others.
    bindir = None if found is None else (found / "initdb").resolve().parent
    if bindir is None or not (bindir / "pg_basebackup").exists():
        yield "no initdb and pg_basebackup (Debian: apt install postgresql)"
        return
    if prefix is None:
        yield "running as root without a postgres OS user to run PostgreSQL as"
        return
    base = Path(tempfile.mkdtemp(prefix="helix-pg-pair-"))
    os.chmod(base, 0o777)
    pair = None
    try:
        pair = PostgresPair(bindir, prefix, base, synchronous=synchronous, fsync=fsync)
        yield pair
    finally:
        if pair is not None:
            pair.stop()
        shutil.rmtree(base, ignore_errors=True)
