"""The Docker backend: a fresh, locked-down container for every command.

The image is a nearly empty root filesystem (`fixbot-sandbox:local`, built without a registry by
.ci/docker-setup.sh); as in the bubblewrap backend, the host's toolchain (/usr, /opt, the Python
installation, a few /etc files) is bind-mounted into it read-only. A user-named image brings its
own toolchain instead. Every container is labelled, never reused and always removed; containers a
crashed fixbot left behind are reaped when the next DockerSandbox is made.

The container logs nothing to the engine's disk (log driver "none"): fixbot attaches before the
start and drains the stream into the same capped sink proc.py uses, so a flood grows neither
fixbot's memory nor the host's disk. This is the only module that imports the docker SDK, and
only when a DockerSandbox is made: importing it costs nothing where Docker is absent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import CappedSink, Completed
from fixbot.sandbox import seccomp
from fixbot.sandbox.containers import (
    LABEL,
    MountSpec,
    Plan,
    is_leftover,
    mounts,
    process_identity,
    toolchain_mounts,
)
from fixbot.sandbox.host import NOBODY, SANDBOX_GID, give_to, hand_over, share
from fixbot.sandbox.protocol import (
    BASE_ENV,
    DEFAULT_LIMITS,
    OOM_NOTE,
    SETUP_ENV,
    WORKSPACE,
    Limits,
    RunSpec,
    prepared_env,
)

if TYPE_CHECKING:
    import docker
    from docker.types import Mount

LOCAL_IMAGE = "fixbot-sandbox:local"
SETUP_HINT = "as root, .ci/docker-setup.sh installs docker.io, starts dockerd and builds the image"

_PROBE_TIMEOUT = 5  # seconds for the engine to answer at all
_REQUEST_TIMEOUT = 60  # seconds for one API request once it has
_STREAM_GRACE = 15.0  # seconds after a kill before the output stream is cut
# Containers this process is running now: any other container it owns is a leftover.
_IN_FLIGHT: set[str] = set()
_IN_FLIGHT_LOCK = threading.Lock()
_PATH_IN_IMAGE = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _sdk() -> Any:
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable(
            "the docker Python SDK is not installed: pip install 'docker>=7'"
        ) from exc
    return docker


def sdk_version() -> str | None:
    """The installed docker SDK's version, or None when it is not installed."""
    try:
        return str(_sdk().__version__)
    except SandboxUnavailable:
        return None


def _engine_errors() -> tuple[type[BaseException], ...]:
    import docker.errors
    import requests.exceptions

    return (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


_REMOVE_SECONDS = 60.0
_REAP_SECONDS = 10.0  # for each leftover: a start is not held up long by one that will not go


class DockerSandbox:
    name = "docker"
    passes_fds = False  # a container inherits no descriptor: the report channel is a socket

    def _remove(self, container: str, seconds: float = _REMOVE_SECONDS) -> bool:
        """Remove the container, retrying while a busy engine (a fork bomb's teardown) times
        out; a container that is already gone counts as removed."""
        import docker.errors

        deadline = time.monotonic() + seconds
        while True:
            try:
                self._api.remove_container(container, force=True, v=True)
                return True
            except docker.errors.NotFound:
                return True
            except self._errors:
                if time.monotonic() >= deadline or not self._engine_answers():
                    return False  # a gone engine is reaped from on the next run
                time.sleep(1.0)

    def _engine_answers(self) -> bool:
        try:
            return bool(self._api.ping())
        except self._errors:
            return False

    def __init__(
        self,
        image: str = LOCAL_IMAGE,
        *,
        host_toolchain: bool | None = None,
        environment: Mapping[str, str] | None = None,
        seccomp_filter: bool = True,
    ) -> None:
        """Connect to the engine named by `environment` (DOCKER_HOST...; default: os.environ).

        `host_toolchain` (default: only for the local image) mounts the host's toolchain;
        `seccomp_filter` off keeps the engine's default profile (tests show what it lets by).
        """
        sdk = _sdk()
        self._errors = _engine_errors()
        self._client = self._connect(sdk, environment)
        self._api = self._client.api
        try:
            found = _image(self._client, image)
            self.engine_version = str(self._api.version()["Version"])
            security = list(self._api.info().get("SecurityOptions") or [])
        except self._errors as exc:
            self._client.close()
            raise SandboxUnavailable(f"the Docker engine failed: {exc}") from exc
        except SandboxUnavailable:
            self._client.close()
            raise
        self.image = image
        digests = found.get("RepoDigests") or []
        self.image_id = str(digests[0] if digests else found["Id"])
        self.host_toolchain = image == LOCAL_IMAGE if host_toolchain is None else host_toolchain
        self._toolchain = toolchain_mounts() if self.host_toolchain else []
        self._owner = process_identity(os.getpid()) or f"unknown/{os.getpid()}"
        self._seccomp: tuple[list[str], str] = ([], "the engine's seccomp profile")
        if seccomp_filter:
            self._seccomp = _seccomp_option(security)
        self._unremoved = False
        self._layered: bool | None = None
        self._owned: set[Path] = set()
        self.reaped = self.reap()

    @property
    def layered(self) -> bool:
        """Whether the engine lays a workspace over a snapshot (a local overlay volume); asked
        of the engine once, with a throwaway container. Needs root: whiteouts and ownership."""
        if self._layered is None:
            self._layered = os.geteuid() == 0 and self._probe_layers()
        return self._layered

    def _probe_layers(self) -> bool:
        root = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
        try:
            (root / "lower").mkdir()
            (root / "upper").mkdir()
            (root / "out").mkdir()
            (root / "lower" / "seen").write_text("")
            probe = ["test", "-e", f"{WORKSPACE}/seen"]
            limits = Limits(timeout_seconds=30)
            plan = Plan(root / "upper", root / "out", root / "lower", (), None, setup=False)
            done = self._run(probe, plan, limits, None)
            return done.returncode == 0
        except SandboxFailed:
            return False
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _connect(self, sdk: Any, environment: Mapping[str, str] | None) -> docker.DockerClient:
        unreachable = unreachable_socket(os.environ if environment is None else environment)
        if unreachable:
            raise SandboxUnavailable(
                f"the Docker engine does not answer ({unreachable}); start dockerd "
                f"({SETUP_HINT}), or use --sandbox bwrap"
            )
        client: docker.DockerClient | None = None
        try:
            client = sdk.from_env(timeout=_PROBE_TIMEOUT, environment=environment)
            client.ping()
        except self._errors as exc:
            if client is not None:
                client.close()
            raise SandboxUnavailable(
                f"the Docker engine does not answer ({exc}); start dockerd ({SETUP_HINT}), "
                "or use --sandbox bwrap"
            ) from exc
        client.api.timeout = _REQUEST_TIMEOUT
        return client

    def describe(self) -> str:
        tools = ", host toolchain read-only" if self.host_toolchain else ""
        where = f"image {self.image} {self.image_id}{tools}"
        return f"docker engine {self.engine_version} ({where}; {self.containment()})"

    def containment(self) -> str:
        """What contains a run here (`fixbot doctor`)."""
        caps = "memory and processes capped per sandbox (docker --memory, --pids-limit)"
        return f"{caps}; {self._seccomp[1]}"

    def reap(self) -> list[str]:
        """Remove fixbot's containers whose run is over: owner gone, or done, or overdue."""
        reaped: list[str] = []
        with _IN_FLIGHT_LOCK:
            try:
                listed = self._api.containers(all=True, filters={"label": f"{LABEL}=1"})
            except self._errors:
                return reaped  # still unremoved: tried again on the next run
            unremoved = False
            for found in listed:
                labels = found.get("Labels") or {}
                if found["Id"] not in _IN_FLIGHT and is_leftover(labels, self._owner):
                    # Retried like any removal: an engine that has just come back may still be
                    # removing it (a removal cut short with the connection), or be busy.
                    if self._remove(str(found["Id"]), _REAP_SECONDS):
                        reaped.append(str(found["Id"]))
                    else:
                        unremoved = True
            self._unremoved = unremoved
        return reaped

    def close(self) -> None:
        """Close the connections to the engine (containers are removed run by run)."""
        self._client.close()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        if spec.lower is not None and not self.layered:
            raise ValueError("this Docker engine cannot lay a workspace over another tree")
        if spec.fds:
            raise ValueError("a container cannot inherit descriptors: pass a socket in a mount")
        workspace, lower, readonly = spec.workspace, spec.lower, spec.readonly
        plan = Plan(
            workspace,
            spec.outputs,
            lower,
            readonly,
            spec.prepared,
            False,
            spec.mounts,
            spec.persona,
        )
        return self._run(argv, plan, spec.limits, spec.env)

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> Completed:
        outputs = Path(tempfile.mkdtemp(prefix="fixbot-prepare-out-"))
        try:
            if os.geteuid() == 0:
                give_to(env_dir, NOBODY)
            plan = Plan(workspace, outputs, None, (), env_dir, True, tuple(mounts))
            return self._run(argv, plan, limits, {**SETUP_ENV, **(env or {})})
        finally:
            if os.geteuid() == 0:
                share(env_dir)  # every later run reads it through the sandboxes' group
            shutil.rmtree(outputs, ignore_errors=True)

    def _run(
        self, argv: Sequence[str], plan: Plan, limits: Limits, env: Mapping[str, str] | None
    ) -> Completed:
        if not argv:
            raise ValueError("empty argv")
        lower = plan.lower
        if os.geteuid() == 0:
            hand_over(plan.workspace, plan.outputs, lower, self._owned, NOBODY)
        work = None
        if lower is not None:
            work = Path(tempfile.mkdtemp(prefix=".overlay-work-", dir=plan.workspace.parent))
        try:
            return self._contained(argv, plan, work, limits, env)
        finally:
            if work is not None:
                shutil.rmtree(work, ignore_errors=True)

    def _contained(
        self,
        argv: Sequence[str],
        plan: Plan,
        work: Path | None,
        limits: Limits,
        env: Mapping[str, str] | None,
    ) -> Completed:
        if self._unremoved:
            self.reap()  # what an engine failure left behind, once it answers again
        start = time.monotonic()
        try:
            with _IN_FLIGHT_LOCK:
                container = self._create(argv, plan, work, limits, env)
                _IN_FLIGHT.add(container)
        except self._errors as exc:
            self._unremoved = True  # it may exist all the same
            raise SandboxFailed(f"docker could not create the container: {exc}") from exc
        try:
            returncode, oom_killed, timed_out, sink = self._attend(container, limits)
        except self._errors as exc:
            raise SandboxFailed(f"the Docker engine failed during the run: {exc}") from exc
        finally:
            if not self._remove(container):
                self._unremoved = True
            _IN_FLIGHT.discard(container)
        return Completed(
            argv=tuple(argv),
            returncode=returncode,
            output=sink.text() + (OOM_NOTE if oom_killed else ""),
            seconds=time.monotonic() - start,
            timed_out=timed_out,
            output_bytes=sink.total,
        )

    def _create(
        self,
        argv: Sequence[str],
        plan: Plan,
        work: Path | None,
        limits: Limits,
        env: Mapping[str, str] | None,
    ) -> str:
        from docker.types import LogConfig, Ulimit

        specs = [*self._toolchain, *mounts(plan, work)]
        persona = plan.persona
        file_size = limits.file_size_mb * 1024 * 1024
        if persona is not None:
            file_size = -1 if persona.file_size is None else persona.file_size  # -1: none
        tmpfs = {"/tmp": f"rw,nosuid,nodev,size={limits.tmp_size_mb}m,mode=1777"}
        if persona is not None:  # an empty home where the host has it
            tmpfs[persona.home] = f"rw,nosuid,nodev,size={limits.tmp_size_mb}m,mode=1777"
        cpu_seconds = int(limits.timeout_seconds * max(limits.cpus, 1)) + 1
        memory = limits.memory_mb * 1024 * 1024
        host_config = self._api.create_host_config(
            mounts=[_mount(spec) for spec in specs],
            # Only fixbot's prepare step has a network: the host's, as the repository's own CI
            # would (engines on CI machines often have no bridge).
            network_mode="host" if plan.setup else "none",
            ipc_mode="private",
            read_only=True,
            tmpfs=tmpfs,
            shm_size=f"{limits.tmp_size_mb}m",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges", *self._seccomp[0]],
            pids_limit=limits.pids,
            mem_limit=memory,
            memswap_limit=memory,
            nano_cpus=int(min(limits.cpus, os.cpu_count() or 1) * 1e9),
            init=True,
            ulimits=[
                Ulimit(name="fsize", soft=file_size, hard=file_size),
                Ulimit(name="nofile", soft=1024, hard=1024),
                Ulimit(name="core", soft=0, hard=0),
                Ulimit(name="cpu", soft=cpu_seconds, hard=cpu_seconds),
            ],
            log_config=LogConfig(type=LogConfig.types.NONE),
            oom_score_adj=1000,  # under host memory pressure, the candidate goes first
        )
        deadline = time.time() + limits.timeout_seconds + 60
        base = persona.environment() if persona is not None else BASE_ENV
        environment = {**base, "PATH": self._path(), **(env or {})}
        if plan.prepared is not None:
            environment.update(prepared_env(self._path()))
        created = self._api.create_container(
            self.image,
            # The engine adds HOSTNAME to every environment: `env -u` keeps it the allow-list,
            # and makes a missing command exit 127 as it would in a shell.
            command=["env", "-u", "HOSTNAME", *argv],
            # As root: nobody, in the group that reads the shared snapshot and environment.
            user=f"{NOBODY}:{SANDBOX_GID}" if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}",
            environment=[f"{key}={value}" for key, value in environment.items()],
            working_dir=plan.trees[-1],
            # a host network keeps its name
            hostname=None if plan.setup else persona.hostname if persona else "sandbox",
            labels={
                LABEL: "1",
                f"{LABEL}.owner": self._owner,
                f"{LABEL}.deadline": f"{deadline:.0f}",
            },
            host_config=host_config,
            stdin_open=False,
            tty=False,
        )
        return str(created["Id"])

    def _path(self) -> str:
        if not self.host_toolchain:
            return _PATH_IN_IMAGE
        dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        return ":".join(dict.fromkeys(dirs))

    def _attend(self, container: str, limits: Limits) -> tuple[int, bool, bool, CappedSink]:
        """Start the container, drain its output until it stops or its time is up."""
        sink = CappedSink(limits.output_bytes)
        # Attached before the start, so nothing the command writes is missed.
        stream = self._api.attach(container, stdout=True, stderr=True, stream=True)
        expired = threading.Event()
        # The stream ends when the container stops; should the engine not say so, it is cut.
        cut = threading.Timer(_STREAM_GRACE, _close_quietly, args=(stream,))
        cut.daemon = True

        def expire() -> None:
            expired.set()
            with contextlib.suppress(*self._errors):
                self._api.kill(container)
            cut.start()

        timer = threading.Timer(limits.timeout_seconds, expire)
        timer.daemon = True
        try:
            self._api.start(container)
            timer.start()
            for chunk in stream:
                sink.feed(chunk)
            status = self._api.wait(container, timeout=_REQUEST_TIMEOUT)
            state = self._api.inspect_container(container)["State"]
        finally:
            timer.cancel()
            timer.join()  # so that `cut` is either started or never will be
            cut.cancel()
            _close_quietly(stream)
        return int(status["StatusCode"]), bool(state.get("OOMKilled")), expired.is_set(), sink


def _seccomp_option(engine_options: Sequence[str]) -> tuple[list[str], str]:
    """fixbot's own filter in place of the engine's default profile (which lets ptrace and, in
    older engines, io_uring through): the same policy as the bubblewrap backend."""
    if not any("name=seccomp" in option for option in engine_options):
        return [], "no seccomp filter (the engine has no seccomp support)"
    try:
        arch = seccomp.native_arch()
    except seccomp.Unsupported as exc:
        return [], f"the engine's default seccomp profile ({exc})"
    return [f"seccomp={seccomp.docker_profile(arch)}"], seccomp.describe(arch)


def unreachable_socket(environment: Mapping[str, str]) -> str:
    """Why the engine's unix socket takes no connection ("" when it does, or the engine is not
    on a unix socket), asked with a socket of fixbot's own, closed whatever happens: the SDK
    leaves its socket open when the connection fails."""
    host = environment.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if not host.startswith("unix://"):
        return ""
    path = host.removeprefix("unix://")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(_PROBE_TIMEOUT)
        try:
            probe.connect(path)
        except OSError as exc:
            return f"no engine at {path}: {exc.strerror or exc}"
    return ""


def _close_quietly(stream: Any) -> None:
    with contextlib.suppress(Exception):
        stream.close()  # shuts the socket down, waking a reader blocked on it
    # The SDK leaves the HTTP response, and with it the socket's last reference, open.
    with contextlib.suppress(Exception):
        stream._response.close()


def _image(client: docker.DockerClient, image: str) -> dict[str, Any]:
    """The engine's record of `image`; SandboxUnavailable, saying what to do, when it has none."""
    import docker.errors

    try:
        found: dict[str, Any] = client.images.get(image).attrs
    except docker.errors.ImageNotFound as exc:
        remedy = SETUP_HINT if image == LOCAL_IMAGE else f"docker pull {image}, or build it"
        raise SandboxUnavailable(
            f"the sandbox image {image} is not on this Docker engine; {remedy}"
        ) from exc
    return found


def _mount(spec: MountSpec) -> Mount:
    from docker.types import DriverConfig, Mount

    if spec.overlay is None:
        return Mount(spec.target, spec.source, type="bind", read_only=spec.read_only)
    return Mount(
        spec.target,
        None,
        type="volume",
        no_copy=True,
        labels={LABEL: "1"},
        driver_config=DriverConfig("local", dict(spec.overlay)),
    )
