"""Device profiles: a real SSD fitted to fio measurements, shipped with the package.

A profile is a TOML file (python/ssdlab/profiles/NAME.toml, or any path) with

    [profile]
    name = "samsung-980pro-1tb"
    device = "Samsung 980 PRO 1 TB (PCIe 4.0 NVMe, TLC)"
    capacity_bytes = 1000204886016    # what fio's size=100% means on the real device
    simulated_bytes = 268435456       # the scaled-down device a point is simulated on
    precondition = "fill-random"      # the device's state before a point (run.precondition)
    fast_forward = true               # a writing point starts from the state its own ramp leaves
    default_host = "jobs-sweep"

    [config]                          # the device: any ssdlab configuration keys
    device = { channels = 8, ... }

    [hosts.jobs-sweep]                # one or more hosts the device was measured from
    engine = "io_uring"               # the engine its costs were fitted with
    cpu_us = 2.6                      # host.cpu_us with that engine
    wake_us = 4.0                     # host.wake_us with that engine

and comments at the top that say what it was fitted on and how well it predicts. A host's costs
for another engine follow from the fitted engine's by the factors of `ENGINES` below.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..api import read_toml
from .output import FioError

PROFILE_DIR = Path(__file__).resolve().parent.parent / "profiles"


@dataclass(frozen=True)
class Engine:
    """An I/O engine's per-I/O host costs relative to libaio's, and whether it is synchronous
    (one I/O in flight per thread whatever `iodepth`, as fio documents for sync engines)."""

    cpu: float
    wake: float
    sync: bool = False
    source: str = ""


# Relative per-I/O costs. [R] priors, not fitted here (the shared measurements hold io_uring and
# libaio only): io_uring saves libaio's two system calls per I/O by sharing its rings
# (io_uring's design document, Axboe 2019: about 1.7 M against 1.3 M 4 KiB IOPS per core on
# the same device with polling off); SPDK's user-space driver polls (no interrupt, no wake-up)
# and costs a few hundred ns per I/O (SPDK's NVMe driver performance reports: about 10 M IOPS
# per core); psync and friends make one blocking system call per I/O, and each completion wakes
# the sleeping thread.
ENGINES = {
    "libaio": Engine(1.0, 1.0, source="reference"),
    "io_uring": Engine(0.76, 1.0, source="Axboe, Efficient IO with io_uring (2019): 1.7 M vs 1.3 M IOPS/core"),
    "spdk": Engine(0.15, 0.0, source="SPDK NVMe driver reports: ~10 M IOPS per core, polled"),
    "psync": Engine(1.1, 1.0, sync=True, source="one pread/pwrite system call per I/O"),
    "sync": Engine(1.1, 1.0, sync=True, source="one read/write system call per I/O (and a seek)"),
    "pvsync": Engine(1.1, 1.0, sync=True, source="one preadv/pwritev system call per I/O"),
    "pvsync2": Engine(1.1, 1.0, sync=True, source="one preadv2/pwritev2 system call per I/O"),
}


@dataclass(frozen=True)
class Host:
    """A host set-up a device was measured from: its per-I/O costs with the engine fitted."""

    name: str
    engine: str
    cpu_us: float
    wake_us: float
    # The part of cpu_us that submits (fio's slat; host.submit_us)
    submit_us: float = 0.0

    def costs(self, engine: str) -> dict[str, float]:
        """`cpu_us`, `submit_us` and `wake_us` (the [host] keys) with `engine`: the fitted ones
        scaled by ENGINES."""
        if engine not in ENGINES:
            raise FioError(f"fio option `ioengine`: `{engine}` is not modelled (known: {', '.join(ENGINES)})")
        have, want = ENGINES[self.engine], ENGINES[engine]
        cpu = want.cpu / have.cpu
        wake = self.wake_us * want.wake / have.wake if have.wake > 0 else 0.0
        return {"cpu_us": self.cpu_us * cpu, "submit_us": self.submit_us * cpu, "wake_us": wake}


@dataclass
class Profile:
    name: str
    path: str
    meta: dict
    config: dict
    hosts: dict[str, Host] = field(default_factory=dict)

    @property
    def capacity_bytes(self) -> int:
        return int(self.meta["capacity_bytes"])

    @property
    def simulated_bytes(self) -> int:
        return int(self.meta["simulated_bytes"])

    @property
    def precondition(self) -> str:
        return str(self.meta.get("precondition", "fill"))

    @property
    def fast_forward(self) -> bool:
        """Whether a writing point's threads are fast-forwarded through fio's ramp and the first
        half of its runtime before the simulated window (ssdlab.fio.workload.fast_forwarded)."""
        v = self.meta.get("fast_forward", False)
        if not isinstance(v, bool):
            raise FioError(f"profile {self.name}: [profile] fast_forward must be true or false, not {v!r}")
        return v

    def host(self, name: str | None = None) -> Host:
        name = name or self.meta.get("default_host") or next(iter(self.hosts), None)
        if name not in self.hosts:
            known = ", ".join(self.hosts) or "none"
            raise FioError(f"profile {self.name}: no host `{name}` (its hosts: {known})")
        return self.hosts[name]

    def base_config(self) -> dict:
        """The device's configuration (a copy)."""
        return copy.deepcopy(self.config)

    def run_config(self, over: Mapping | None = None, host: str | None = None) -> dict:
        """A run on this device: its configuration in timed mode with its preconditioning, the
        host's per-I/O costs (its engine's) when the run has flows, then `over`'s keys on top."""
        cfg = self.base_config()
        cfg.setdefault("run", {}).update(mode="timed", precondition=self.precondition)
        over = copy.deepcopy(dict(over or {}))
        if over.get("flows"):
            h = self.host(host)
            cfg.setdefault("host", {}).update(cpu_us=h.cpu_us, wake_us=h.wake_us)
        elif host is not None:
            raise FioError("--host applies the host's per-I/O costs to [[flows]]; this run has none")
        _merge(cfg, over)
        return cfg


def _merge(base: dict, over: Mapping) -> None:
    """`over` into `base`, table by table (over's values win)."""
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


def load_profile(name_or_path: str | Path) -> Profile:
    """A shipped profile by name, or a profile file by path."""
    p = Path(name_or_path)
    if not p.suffix and not p.exists():
        p = PROFILE_DIR / f"{name_or_path}.toml"
        if not p.is_file():
            raise FioError(f"no profile `{name_or_path}` (shipped: {', '.join(profile_names()) or 'none'})")
    _, data = read_toml(p, FioError)
    meta = data.get("profile")
    if not isinstance(meta, dict):
        raise FioError(f"{p}: not a profile (no [profile] table)")
    for k in ("name", "capacity_bytes", "simulated_bytes"):
        if k not in meta:
            raise FioError(f"{p}: [profile] has no `{k}`")
    hosts = {}
    for name, h in (data.get("hosts") or {}).items():
        try:
            hosts[name] = Host(name, str(h.get("engine", "libaio")), float(h["cpu_us"]), float(h["wake_us"]),
                               float(h.get("submit_us", 0.0)))  # fmt: skip
        except (KeyError, TypeError, ValueError) as e:
            raise FioError(f"{p}: [hosts.{name}]: missing or not a number: {e}") from None
        if hosts[name].engine not in ENGINES:
            raise FioError(f"{p}: [hosts.{name}] engine `{hosts[name].engine}` is not one of {', '.join(ENGINES)}")
    if not hosts:
        raise FioError(f"{p}: a profile needs at least one [hosts.NAME] table")
    return Profile(str(meta["name"]), str(p), meta, dict(data.get("config") or {}), hosts)


def header(p: Path) -> list[str]:
    """The comment lines at the top of a profile file (what it was fitted on, how well)."""
    lines = []
    for line in p.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    return lines
