"""How noxfile.py chooses the torch build, tried without the network.

Each case runs the real pip probe against a find-links folder made here, with pip's own
configuration switched off and ``--no-index``, so nothing is fetched from anywhere.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("noxfile", ROOT / "noxfile.py")
noxfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(noxfile)

PINNED = noxfile.pinned_version("torch")


def fake_torch_wheel(folder: Path, version: str) -> Path:
    """A tiny wheel that pip accepts as torch ``version`` (metadata only, no code)."""
    name = f"torch-{version}.dist-info"
    wheel = folder / f"torch-{version}-py3-none-any.whl"
    metadata = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"
    tags = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{name}/METADATA", metadata)
        archive.writestr(f"{name}/WHEEL", tags)
        archive.writestr(f"{name}/RECORD", "")
    return wheel


def pip_environ(find_links: Path | None, **extra: str) -> dict[str, str]:
    """This process's environment without any pip settings, plus the ones given."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    environ |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    environ.pop("TORCH_INDEX_URL", None)
    if find_links is not None:
        environ["PIP_FIND_LINKS"] = str(find_links)
    return environ | extra


def test_a_local_wheel_matching_the_pin_means_pip_gets_no_index(tmp_path):
    fake_torch_wheel(tmp_path, f"{PINNED}+cpu")
    source = noxfile.torch_source(sys.executable, pip_environ(tmp_path), platform="linux")
    assert source == ["--no-index"]


def test_without_a_local_wheel_linux_takes_pytorchs_cpu_index(tmp_path):
    source = noxfile.torch_source(sys.executable, pip_environ(tmp_path), platform="linux")
    assert source == ["--index-url", "https://download.pytorch.org/whl/cpu"]


def test_a_local_wheel_of_another_version_is_not_used(tmp_path):
    fake_torch_wheel(tmp_path, "2.0.0+cpu")
    source = noxfile.torch_source(sys.executable, pip_environ(tmp_path), platform="linux")
    assert source == ["--index-url", noxfile.TORCH_CPU_INDEX]


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_macos_and_windows_take_the_default_index_whose_wheels_are_cpu_builds(tmp_path, platform):
    assert noxfile.torch_source(sys.executable, pip_environ(tmp_path), platform=platform) == []


def test_a_local_wheel_is_used_on_macos_too(tmp_path):
    fake_torch_wheel(tmp_path, PINNED)
    source = noxfile.torch_source(sys.executable, pip_environ(tmp_path), platform="darwin")
    assert source == ["--no-index"]


def test_torch_index_url_wins_over_a_local_wheel(tmp_path):
    fake_torch_wheel(tmp_path, f"{PINNED}+cpu")
    cuda = "https://download.pytorch.org/whl/cu128"
    environ = pip_environ(tmp_path, TORCH_INDEX_URL=cuda)
    assert noxfile.torch_source(sys.executable, environ, platform="linux") == ["--index-url", cuda]


def test_torch_index_url_is_read_from_the_environment_by_default(monkeypatch):
    cuda = "https://download.pytorch.org/whl/cu128"
    monkeypatch.setenv("TORCH_INDEX_URL", cuda)
    assert noxfile.torch_source(sys.executable) == ["--index-url", cuda]


def test_the_pin_is_unlabelled_so_any_build_of_that_release_satisfies_it():
    # torch==X.Y.Z matches X.Y.Z+cpu and X.Y.Z+cu128 alike; a label would rule out the others.
    assert "+" not in PINNED


def test_nox_runs_every_test_the_slow_ones_too_after_executing_the_chapters(monkeypatch):
    runs, logs = [], []
    session = SimpleNamespace(
        name="tests",
        posargs=[],
        run=lambda *args, **kwargs: runs.append(args),
        log=logs.append,
    )
    monkeypatch.setattr(noxfile, "package_python", lambda session: "python")
    monkeypatch.setattr(noxfile, "npm_ci", lambda session: None)
    assert "tests" in noxfile.nox.options.sessions
    noxfile.tests.func(session)
    assert runs == [("python", "-m", "book", "execute"), ("python", "-m", "pytest", "-n", "auto")]
    # Every session says how long it took, in seconds.
    assert len(logs) == 1 and re.fullmatch(r"session tests: \d+ s", logs[0]), logs
