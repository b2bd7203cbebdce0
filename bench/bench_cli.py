"""Wall time of the drop-in tools, each run as a fresh process exactly as an operator runs it.

Figures (one line each; best, median and worst of N runs):
  status      kafka-metadata-quorum --bootstrap-controller <3 local controllers> describe --status
  replication kafka-metadata-quorum ... describe --replication
  features    kafka-features --bootstrap-controller ... describe
  check       kafka-metadata-quorum ... check
  format      kafka-storage format --standalone (a fresh directory each run, fsyncs included)
  uuid        kafka-storage random-uuid
  help        kafka-metadata-quorum --help
  python      python -c pass (the interpreter's own start-up, for scale)

Each line also gives the median CPU time (user and system) of the tool's process, which moves less
than the wall time with the load of a shared machine. Every command runs once before it is timed,
with bytecode caching on (into a temporary PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE
is set), as an installed tool runs.

``--against DIR`` times a second installation's tools too (DIR is its ``bin`` directory, e.g. a
virtual environment with an older version installed), alternating run by run with this one's, so
that both see the same load of a shared machine; each figure is then printed for both.
``--profile`` runs each command once more with an import hook and prints where its imports spent their
time, summed by top-level package: each module's own time (executing it, its imports excluded) and
the whole run. The hook times the loaders, so it also sees the modules loaded through
``importlib.import_module`` (pydantic's lazy attributes, the generated messages), which
``python -X importtime`` leaves out and counts in the importing module's own time.

Usage: python bench/bench_cli.py [--runs N] [--against DIR] [--profile]
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kafka_admin_kraft import Admin
from kafka_admin_kraft_server.local import HOST, LocalQuorum

BIN = Path(sys.executable).parent
PROFILE_TOP = 8
"""Packages listed per command by --profile."""
PROFILE_RUNS = 5
"""Runs per command of --profile, of which the median is shown."""


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def wall(command: list[str]) -> tuple[float, float]:
    """Wall time of one run, and the CPU time (user + system) the process used: on a shared machine the
    second waits less on other processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def report(name: str, samples: list[tuple[float, float]]) -> None:
    ms = sorted(took * 1e3 for took, _ in samples)
    cpu = statistics.median(used * 1e3 for _, used in samples)
    print(f"{name:<12} best {ms[0]:6.0f} ms   median {statistics.median(ms):6.0f} ms   worst {ms[-1]:6.0f} ms"
          f"   cpu median {cpu:5.0f} ms   ({len(ms)} runs)", flush=True)


PROFILE_HOOK = """
import sys, time
script, out = sys.argv[1], sys.argv[2]
own, stack = {}, []


class Timed:
    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        start = time.perf_counter()
        stack.append(0.0)
        try:
            self.loader.exec_module(module)
        finally:
            took = time.perf_counter() - start
            own[module.__name__] = own.get(module.__name__, 0.0) + took - stack.pop()
            if stack:
                stack[-1] += took


class Finder:
    def find_spec(self, name, path=None, target=None):
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if hasattr(spec.loader, "exec_module"):
                        spec.loader = Timed(spec.loader)
                    return spec
        return None


sys.meta_path.insert(0, Finder())
began = time.perf_counter()


def dump():
    total = time.perf_counter() - began
    with open(out, "w") as stream:
        stream.write(repr((total, own)))


import atexit

atexit.register(dump)
sys.argv = [script, *sys.argv[3:]]
with open(script) as stream:
    code = compile(stream.read(), script, "exec")
exec(code, {"__name__": "__main__"})
"""
"""Runs a console script with every module's loader timed; at exit writes (run time, {module: own
time}) to the file named first."""


def import_profile(command: list[str], out: Path) -> str:
    """Where a run of ``command`` (a console script) spent its time, the median of PROFILE_RUNS runs by
    run time: the run after the interpreter's start, the imports in it, and their own time summed by
    top-level package, largest first."""
    script, *args = command
    python = Path(script).parent / "python"
    runs: list[tuple[float, dict[str, float]]] = []
    for _ in range(PROFILE_RUNS):
        # From a directory of its own: ``python -c`` puts the working directory first on sys.path, and
        # from a checkout that would load the checkout's packages instead of the installation's.
        subprocess.run([str(python), "-c", PROFILE_HOOK, script, str(out), *args], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=ENV, check=True, cwd=out.parent)
        runs.append(ast.literal_eval(out.read_text()))
    total, own = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
    by_package: Counter[str] = Counter()
    for module, seconds in own.items():
        by_package[module.split(".")[0]] += seconds
    top = ", ".join(f"{name} {seconds * 1e3:.0f}" for name, seconds in by_package.most_common(PROFILE_TOP))
    return f"run {total * 1e3:.0f} ms, imports {sum(by_package.values()) * 1e3:.0f} ms: {top}"


def tool(bin_dir: Path, name: str, *args: str) -> list[str]:
    return [str(bin_dir / name), *args]


def format_run(root: Path, run: str, bin_dir: Path) -> tuple[float, float]:
    directory = root / f"format-{run}"
    config = root / f"format-{run}.properties"
    config.write_text("process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:9093\n"
                      "controller.listener.names=CONTROLLER\n"
                      f"controller.quorum.bootstrap.servers=127.0.0.1:9093\nlog.dirs={directory}\n")
    return wall(tool(bin_dir, "kafka-storage", "format", "--config", str(config),
                     "--cluster-id", "MkU3OEVBNTcwNTJENDM2Qg", "--standalone"))


def commands(bin_dir: Path, bootstrap: str) -> list[tuple[str, list[str]]]:
    quorum_tool = tool(bin_dir, "kafka-metadata-quorum", "--bootstrap-controller", bootstrap)
    return [
        ("status", [*quorum_tool, "describe", "--status"]),
        ("replication", [*quorum_tool, "describe", "--replication"]),
        ("features", tool(bin_dir, "kafka-features", "--bootstrap-controller", bootstrap, "describe")),
        ("check", [*quorum_tool, "check"]),
        ("uuid", tool(bin_dir, "kafka-storage", "random-uuid")),
        ("help", tool(bin_dir, "kafka-metadata-quorum", "--help")),
        ("python", [str(bin_dir / "python"), "-c", "pass"]),
    ]


def time_alternating(runs: int, variants: list[Callable[[str], tuple[float, float]]]
                     ) -> list[list[tuple[float, float]]]:
    """One warm-up run of each variant, then ``runs`` rounds in which each variant runs once."""
    for variant in variants:
        variant("warm")
    samples: list[list[tuple[float, float]]] = [[] for _ in variants]
    for run in range(runs):
        for index, variant in enumerate(variants):
            samples[index].append(variant(str(run)))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--against", type=Path, help="the bin directory of another installation to compare")
    parser.add_argument("--profile", action="store_true", help="print each command's import time by package")
    args = parser.parse_args()
    installs = [("", BIN)] + ([("  (against)", args.against)] if args.against else [])
    with tempfile.TemporaryDirectory() as tmp, LocalQuorum(Path(tmp) / "quorum", 3) as quorum:
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        quorum.format().start_all()
        bootstrap = quorum.bootstrap_servers()
        with Admin(bootstrap_controllers=bootstrap, default_api_timeout_ms=60000) as admin:
            deadline = time.monotonic() + 60
            while admin.describe_metadata_quorum().high_watermark <= 0 and time.monotonic() < deadline:
                time.sleep(0.1)
        per_install = [commands(bin_dir, bootstrap) for _, bin_dir in installs]
        for index, (name, _) in enumerate(per_install[0]):
            variants = [lambda _run, command=cmds[index][1]: wall(command) for cmds in per_install]
            for (label, _), samples in zip(installs, time_alternating(args.runs, variants), strict=True):
                report(name + label, samples)
        format_variants = [lambda run, tag=str(i), bin_dir=bin_dir: format_run(Path(tmp), f"{tag}-{run}",
                                                                                bin_dir)
                           for i, (_, bin_dir) in enumerate(installs)]
        for (label, _), samples in zip(installs, time_alternating(args.runs, format_variants), strict=True):
            report("format" + label, samples)
        if args.profile:
            for (label, _), cmds in zip(installs, per_install, strict=True):
                for name, command in cmds[:-1]:  # not python -c pass
                    print(f"{name + label:<12} {import_profile(command, Path(tmp) / 'profile')}", flush=True)
    print(f"controllers  {HOST}, 3 reference controllers; python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
