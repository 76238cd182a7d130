"""Starting, health-checking and stopping ``vllm serve`` for model entries with a local path.

One server per model entry (LoRA adapters of that entry are served by the same process with
``--enable-lora``), bound to loopback, in its own process group. A state file
``<state_dir>/<entry>.json`` records pid, port and base URL so that every job of the workflow
routes its requests there; ``lecode serve stop`` (Snakefile onsuccess/onerror) ends them.

Servers start on demand: the Snakefile's onstart sets ``LECODE_VLLM_SERVE=<state_dir>`` for the
jobs of its run, and the first job that sends a request to a vLLM entry starts that entry's
server (:func:`ensure_base_url`), under an exclusive lock on ``<state_dir>/<entry>.lock`` so that
concurrent jobs start exactly one; later jobs reuse it. Without that variable (a cluster job
under ``no-hooks``, a job run by hand) a job only routes to a server already recorded.

The command is ``vllm serve`` unless ``LECODE_VLLM_COMMAND`` (or ``command=``) names another
prefix, e.g. the stand-in server used by tests: ``python tests/support/vllm_standin.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lecode.config.models import ModelEntry, VLLMEntry
from lecode.llm.errors import LLMConfigError
from lecode.llm.logs import LOG
from lecode.llm.spec import ModelSpec, is_llm_entry, llm_entry

LOOPBACK = "127.0.0.1"
COMMAND_ENV = "LECODE_VLLM_COMMAND"
#: Set by the Snakefile's onstart to the state directory: jobs of that run may start servers.
SERVE_ENV = "LECODE_VLLM_SERVE"


@dataclass(frozen=True)
class ServerState:
    name: str
    pid: int
    port: int
    base_url: str
    served_models: tuple[str, ...]
    log: str
    command: tuple[str, ...]

    @classmethod
    def read(cls, path: Path) -> ServerState:
        d = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            name=d["name"],
            pid=int(d["pid"]),
            port=int(d["port"]),
            base_url=d["base_url"],
            served_models=tuple(d["served_models"]),
            log=d["log"],
            command=tuple(d["command"]),
        )

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def served_names(spec: ModelSpec) -> list[str]:
    assert spec.serve is not None
    return [spec.served_model, *(name for name, _ in spec.serve.lora_modules)]


def build_command(spec: ModelSpec, port: int, prefix: Sequence[str] | None = None) -> list[str]:
    """The ``vllm serve`` command line for ``spec`` (documented in the README of the workflow)."""
    if spec.serve is None:
        raise LLMConfigError(f"models.{spec.name}: no local 'model_path' to serve")
    env_prefix = os.environ.get(COMMAND_ENV)
    if prefix is None:
        prefix = shlex.split(env_prefix) if env_prefix else ["vllm", "serve"]
    cmd = [
        *prefix,
        spec.serve.path,
        "--host",
        LOOPBACK,
        "--port",
        str(port),
        "--served-model-name",
        spec.served_model,
    ]
    if spec.decoding.seed is not None:
        cmd += ["--seed", str(spec.decoding.seed)]
    if spec.serve.gpu_memory_utilization is not None:
        cmd += ["--gpu-memory-utilization", str(spec.serve.gpu_memory_utilization)]
    if spec.serve.lora_modules:
        cmd += ["--enable-lora", "--lora-modules"]
        cmd += [f"{name}={path}" for name, path in spec.serve.lora_modules]
    cmd += list(spec.serve.args)
    return cmd


def _healthy(base_url: str, names: Sequence[str], timeout: float = 2.0) -> bool:
    # imported here: every LLM job imports this module (LLMRuntime), only a server start calls
    # this, and httpx's import (its command line too) costs a job about 0.2 s
    import httpx

    try:
        r = httpx.get(f"{base_url}/models", timeout=timeout)
        if r.status_code != 200:
            return False
        ids = {m.get("id") for m in r.json().get("data", [])}
        return all(n in ids for n in names)
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, n: int = 2000) -> str:
    try:
        data = path.read_bytes()[-n:]
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def start_server(
    spec: ModelSpec,
    state_dir: str | Path,
    *,
    log_dir: str | Path | None = None,
    command: Sequence[str] | None = None,
    health_timeout: float = 900.0,
    poll: float = 1.0,
) -> ServerState:
    """Start (or reuse a healthy running) server for ``spec`` and wait until it serves."""
    state_dir = Path(state_dir)
    state_path = state_dir / f"{spec.name}.json"
    names = served_names(spec)
    if state_path.exists():
        old = ServerState.read(state_path)
        if _alive(old.pid) and _healthy(old.base_url, names):
            LOG.info("vLLM server for %s already running at %s", spec.name, old.base_url)
            return old
        stop_server(spec.name, state_dir)
    port = spec.serve.port if spec.serve and spec.serve.port else free_port()
    cmd = build_command(spec, port, command)
    log_path = Path(log_dir or state_dir) / f"{spec.name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    LOG.info("starting: %s", shlex.join(cmd))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    base_url = f"http://{LOOPBACK}:{port}/v1"
    state = ServerState(
        spec.name, proc.pid, port, base_url, tuple(names), str(log_path), tuple(cmd)
    )
    state.write(state_path)
    deadline = time.monotonic() + health_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            state_path.unlink(missing_ok=True)
            raise LLMConfigError(
                f"vLLM server for {spec.name} exited with {proc.returncode}; log {log_path}:\n"
                + _tail(log_path)
            )
        if _healthy(base_url, names):
            LOG.info("vLLM server for %s healthy at %s (pid %d)", spec.name, base_url, proc.pid)
            return state
        time.sleep(poll)
    stop_server(spec.name, state_dir)
    raise LLMConfigError(
        f"vLLM server for {spec.name} not healthy after {health_timeout:.0f}s; log {log_path}:\n"
        + _tail(log_path)
    )


def stop_server(name: str, state_dir: str | Path, *, grace: float = 30.0) -> bool:
    """Stop the server recorded for ``name`` (SIGTERM to its group, then SIGKILL)."""
    state_path = Path(state_dir) / f"{name}.json"
    if not state_path.exists():
        return False
    state = ServerState.read(state_path)
    stopped = False
    if _alive(state.pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(state.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _alive(state.pid):
            _reap(state.pid)
            time.sleep(0.1)
        if _alive(state.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(state.pid, signal.SIGKILL)
            _reap(state.pid)
        stopped = True
    state_path.unlink(missing_ok=True)
    return stopped


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def resolve_base_url(server: str, state_dir: str | Path) -> str:
    path = Path(state_dir) / f"{server}.json"
    if not path.exists():
        raise LLMConfigError(
            f"no vLLM server is running for model entry {server!r} (no {path}), and this job "
            f"may not start one ({SERVE_ENV} is not set to {Path(state_dir)}: a local Snakemake "
            "run sets it in its onstart hook); start it with "
            "`lecode serve start --params params.yaml`, or run the vLLM jobs where the hooks "
            "run (docs/clusters.md)"
        )
    return ServerState.read(path).base_url


def serving_enabled(state_dir: str | Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process may start servers recorded in ``state_dir`` (``LECODE_VLLM_SERVE``
    names that directory: the run whose hooks stop them)."""
    env = os.environ if environ is None else environ
    value = env.get(SERVE_ENV, "").strip()
    return bool(value) and Path(value).resolve() == Path(state_dir).resolve()


@contextlib.contextmanager
def server_lock(name: str, state_dir: str | Path) -> Any:
    """An exclusive lock on ``<state_dir>/<name>.lock`` (held while a server is checked or
    started, so that concurrent jobs start one server per entry)."""
    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / f"{name}.lock", "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def ensure_server(
    spec: ModelSpec,
    state_dir: str | Path,
    *,
    log_dir: str | Path | None = "logs/vllm",
    health_timeout: float = 900.0,
    poll: float = 1.0,
) -> ServerState:
    """The recorded healthy server of ``spec``, else a new one (health-checked); under the
    entry's lock, so that of concurrent callers exactly one starts it."""
    with server_lock(spec.name, state_dir):
        return start_server(
            spec, state_dir, log_dir=log_dir, health_timeout=health_timeout, poll=poll
        )


def ensure_base_url(
    server: str,
    models: Mapping[str, ModelEntry],
    state_dir: str | Path,
    *,
    replay: bool = False,
    environ: Mapping[str, str] | None = None,
    log_dir: str | Path | None = "logs/vllm",
    health_timeout: float = 900.0,
) -> str:
    """The base URL of model entry ``server``'s vLLM server, started on demand when this
    process may start it (:func:`serving_enabled`); otherwise the recorded one, as
    :func:`resolve_base_url`. Never starts anything in replay mode."""
    if replay:
        raise LLMConfigError(
            f"replay mode: no vLLM server is started for model entry {server!r}; every "
            "response must come from the store"
        )
    if not serving_enabled(state_dir, environ):
        return resolve_base_url(server, state_dir)
    cfg = models.get(server)
    if cfg is None:
        raise LLMConfigError(f"models.{server}: referenced as a vLLM server but not defined")
    spec = ModelSpec.of(server, llm_entry(server, cfg))
    if spec.serve is None:
        raise LLMConfigError(f"models.{server}: a vLLM server entry needs 'model_path'")
    return ensure_server(spec, state_dir, log_dir=log_dir, health_timeout=health_timeout).base_url


def specs_to_serve(models: Mapping[str, ModelEntry], used: Sequence[str]) -> list[ModelSpec]:
    """Entries with a local path that any of the ``used`` entries needs (directly or via
    ``server:``), each once, in name order."""
    needed: set[str] = set()
    for name in used:
        cfg = models.get(name)
        if cfg is None or not is_llm_entry(cfg):
            continue
        entry = llm_entry(name, cfg)
        if isinstance(entry, VLLMEntry):
            needed.add(entry.server or name)
    specs = []
    for name in sorted(needed):
        if name not in models:
            raise LLMConfigError(f"models.{name}: referenced as a vLLM server but not defined")
        spec = ModelSpec.of(name, llm_entry(name, models[name]))
        if spec.serve is None:
            raise LLMConfigError(f"models.{name}: a vLLM server entry needs 'model_path'")
        specs.append(spec)
    return specs


def stop_all(state_dir: str | Path) -> list[str]:
    state_dir = Path(state_dir)
    stopped = []
    if state_dir.is_dir():
        for path in sorted(state_dir.glob("*.json")):
            if stop_server(path.stem, state_dir):
                stopped.append(path.stem)
    return stopped
