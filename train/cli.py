"""Moved to ``packetrow_cli.main``; this path works until packetrow 0.5.0, with a DeprecationWarning."""

import runpy

from packetrow_env.deprecation import alias_module

alias_module(__spec__.name)  # __spec__: run with -m, the module's __name__ is "__main__"
if __name__ == "__main__":  # python -m packetrow_train.cli ran the command before the move
    runpy.run_module("packetrow_cli", run_name="__main__")
