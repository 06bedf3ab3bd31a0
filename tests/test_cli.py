"""The ``packetrow`` command itself: its version."""

from importlib.metadata import version

import pytest

from packetrow_train.cli import main


def test_version_prints_the_installed_packages_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"packetrow {version('packetrow')}"
