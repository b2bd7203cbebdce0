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

Every command runs once before it is timed, with bytecode caching on (into a temporary
PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE is set), as an installed tool runs.

``--against DIR`` times a second installation's tools too (DIR is its ``bin`` directory, e.g. a
virtual environment with an older version installed), alternating run by run with this one's, so
that both see the same load of a shared machine; each figure is then printed for both.
``--profile`` runs each command once more under ``python -X importtime`` and prints where its imports
spent their time, summed by top-level package (the imported module's own time, its imports excluded).

Usage: python bench/bench_cli.py [--runs N] [--against DIR] [--profile]
"""

from __future__ import annotations

import argparse
import os
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


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def report(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1e3 for s in samples)
    print(f"{name:<12} best {ms[0]:6.0f} ms   median {statistics.median(ms):6.0f} ms   worst {ms[-1]:6.0f} ms"
          f"   ({len(ms)} runs)", flush=True)


def import_profile(command: list[str]) -> str:
    """Import time of one run of ``command`` (a console script or its installation's python), summed by
    top-level package, largest first."""
    script = Path(command[0])
    python = script.parent / "python"
    scripts = [] if script == python else [str(script)]
    result = subprocess.run([str(python), "-X", "importtime", *scripts, *command[1:]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV, check=True)
    by_package: Counter[str] = Counter()
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line[len("import time:"):].split("|")
        by_package[name.strip().split(".")[0]] += int(own)
    total = sum(by_package.values())
    top = ", ".join(f"{name} {us / 1e3:.0f}" for name, us in by_package.most_common(PROFILE_TOP))
    return f"imports {total / 1e3:.0f} ms: {top}"


def tool(bin_dir: Path, name: str, *args: str) -> list[str]:
    return [str(bin_dir / name), *args]


def format_run(root: Path, run: str, bin_dir: Path) -> float:
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


def time_alternating(runs: int, variants: list[Callable[[str], float]]) -> list[list[float]]:
    """One warm-up run of each variant, then ``runs`` rounds in which each variant runs once."""
    for variant in variants:
        variant("warm")
    samples: list[list[float]] = [[] for _ in variants]
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
                for name, command in cmds:
                    print(f"{name + label:<12} {import_profile(command)}", flush=True)
    print(f"controllers  {HOST}, 3 reference controllers; python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
