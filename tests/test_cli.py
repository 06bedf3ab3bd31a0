"""The ``packetrow`` command itself: its version, its table of subcommands, and that it loads a subcommand's module
only when that subcommand runs (``packetrow --help`` and ``packetrow serve`` load no torch)."""

import importlib
import subprocess
import sys
from importlib.metadata import version

import pytest

from packetrow_cli.main import COMMANDS, build_parser, main


def test_version_prints_the_installed_packages_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"packetrow {version('packetrow')}"


def test_help_lists_every_subcommand_with_its_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    assert all(name in shown and help_text in " ".join(shown.split()) for name, (_, help_text) in COMMANDS.items())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_names_a_function_that_adds_its_arguments_and_its_run(name):
    module, function = COMMANDS[name][0].split(":")
    assert callable(getattr(importlib.import_module(module), function))
    (subcommands,) = [a for a in build_parser(name)._actions if a.dest == "command"]
    assert callable(subcommands.choices[name].get_default("run"))


def test_an_unknown_subcommand_is_a_usage_error_that_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["trian"])
    assert exit_.value.code == 2
    assert "invalid choice: 'trian'" in capsys.readouterr().err


def _modules_loaded(command: str | None) -> set[str]:
    code = (f"import sys\nfrom packetrow_cli.main import build_parser\nbuild_parser({command!r})\n"
            "print(' '.join(sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


@pytest.mark.parametrize("command", [None, "serve", "tournament", "demo"])
def test_the_command_and_the_subcommands_that_do_not_train_load_no_torch(command):
    loaded = _modules_loaded(command)
    assert not {"torch", "stable_baselines3", "sb3_contrib"} & loaded
    assert not any(name.startswith("packetrow_train") for name in loaded)
    if command is None:  # the table alone: no subcommand's module, not even the engine
        assert not any(name.startswith("packetrow_") and name.split(".")[0] != "packetrow_cli" for name in loaded)


def test_serve_runs_without_torch_installed(tmp_path):
    # torch made unimportable: serve's parser and app build all the same
    code = ("import sys\nsys.modules['torch'] = None\nfrom packetrow_cli.main import build_parser\n"
            "args = build_parser('serve').parse_args(['serve', '--port', '0'])\n"
            "from packetrow_web import create_app\ncreate_app()\nprint('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
