"""A normal (non-editable) install works from anywhere: the wheel holds only packetrow* names, the shipped model
and configs, and the installed copy plays the shipped agent and finds the main job's config from an empty directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
# {installed top-level package: its folder in the repository}
FOLDERS = {name: SETUPTOOLS["package-dir"].get(name, name) for name in SETUPTOOLS["packages"] if "." not in name}


def source_files() -> dict[str, str]:
    """{path the wheel must hold: repository path} for every file git tracks in the installed folders."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    tracked = subprocess.run(["git", "ls-files", "-z", *FOLDERS.values()], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split("\0")
    wanted = {}
    for package, folder in FOLDERS.items():
        wanted |= {package + path[len(folder):]: path for path in tracked if path.startswith(folder + "/")}
    return wanted


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy: an in-tree build leaves build/lib behind, whose stale files a later wheel would ship
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                         capture_output=True, text=True)
    if run.returncode and "No matching distribution found for setuptools" in run.stderr:
        pytest.skip("no package index to build the wheel's build environment from")
    assert run.returncode == 0, run.stderr
    (path,) = out.glob("packetrow-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                          str(wheel)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return target


def _run_installed(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # the installed copy first on the path; the checkout's editable finder comes after every path entry
    env = {**os.environ, "PYTHONPATH": str(target)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_installs_only_packetrow_names(wheel):
    top = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert top and all(t.startswith("packetrow") for t in top), sorted(top)
    assert set(FOLDERS) <= top


def test_the_wheel_holds_every_module_and_data_file_of_the_source_tree(wheel):
    names = {name for name in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in name}
    expected = set(source_files())
    assert sorted(expected - names) == [], "files of the source tree missing from the wheel"
    assert sorted(names - expected) == [], "files in the wheel that git does not track"


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(SETUPTOOLS["packages"])
    found = {package + path[len(folder):].rpartition("/__init__.py")[0].replace("/", ".")
             for path in source_files().values() if path.endswith("/__init__.py")
             for package, folder in FOLDERS.items() if path.startswith(folder + "/")}
    assert found == listed


def test_the_installed_copy_plays_the_shipped_agent_from_an_empty_directory(installed, tmp_path):
    where = _run_installed(installed, tmp_path, "-c", "import packetrow_models, packetrow_agents; "
                           "print(packetrow_models.__file__); print(packetrow_agents.__file__)")
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(str(installed)) for line in where.stdout.split()), where.stdout
    run = _run_installed(installed, tmp_path, "-m", "packetrow_cli", "tournament", "--agents", "ppo,robust",
                         "--players", "2", "--games", "4", "--no-progress")
    assert run.returncode == 0, run.stderr
    assert "4 games of 2 players" in run.stdout and "ppo" in run.stdout and "robust" in run.stdout


def test_the_installed_copy_finds_the_main_jobs_config_from_an_empty_directory(installed, tmp_path):
    code = ("from packetrow_train.config import load_config, resolve_config; "
            "print(resolve_config('configs/quick.yaml')); print(load_config('quick').name)")
    run = _run_installed(installed, tmp_path, "-c", code)
    assert run.returncode == 0, run.stderr
    path, name = run.stdout.split()
    assert path.startswith(str(installed)) and name == "quick"
    assert not list(tmp_path.iterdir())  # nothing written where it ran


def test_the_installed_copy_reports_the_projects_version(installed, tmp_path):
    """``packetrow --version`` reads the installed package's metadata: the wheel's, built from pyproject.toml."""
    import tomllib

    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    run = _run_installed(installed, tmp_path, "-m", "packetrow_cli", "--version")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"packetrow {expected}"
