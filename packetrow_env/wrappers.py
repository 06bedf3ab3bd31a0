"""Moved to ``packetrow_env.single_agent_env``; this path works until packetrow 0.5.0, with a DeprecationWarning."""

from packetrow_env.deprecation import alias_module

alias_module(__name__)
