"""Packet Row: an exact, fast reinforcement-learning environment for the card-drafting game."""

import importlib
import sys
import types
from importlib.metadata import version

from .engine import Game, IllegalActionError
from . import gymnasium_ids

__all__ = ["Game", "IllegalActionError", "env", "raw_env"]
__version__ = version("packetrow")  # pyproject.toml is the one place the version is written

_LAZY = ("env", "raw_env")  # PettingZoo and Gymnasium load on first use: the rules import without the RL stack


class _Package(types.ModuleType):
    """This package, whose ``env`` stays the function ``env()`` when the submodule ``packetrow_env.env`` loads."""

    def __setattr__(self, name, value):
        # importing the submodule binds it as the package's attribute "env"; keep the function of that name
        if name == "env" and isinstance(value, types.ModuleType):
            value = value.env
        super().__setattr__(name, value)


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(".env", __name__)
        globals()["raw_env"] = module.raw_env
        globals()["env"] = module.env
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _Package
gymnasium_ids.register_with_gymnasium()  # gymnasium.make("packetrow/SingleAgent-v2"), without loading Gymnasium here
