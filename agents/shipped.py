"""The shipped models by name: the files of ``models/`` (installed as the package data ``packetrow_models``) that
agent specs name without a path (``ppo``, ``ppo:robust_br60``, ``robust``, ``mmd``); docs/model_card.md says what each
is."""

import warnings
from importlib.resources import files
from pathlib import Path


def _shipped(name: str) -> Path:
    return Path(str(files("packetrow_models") / name))


# the shipped policies by the name a spec gives them ('ppo:robust_br60'; 'ppo' alone plays the first)
SHIPPED_POLICIES = {
    "ppo": _shipped("ppo_packetrow.npz"),
    "robust_br60": _shipped("robust_br60.npz"),  # a best response to 'ppo', trained 60 minutes
    "robust_br60_br10": _shipped("robust_br60_br10.npz"),  # a best response to robust_br60, trained 10 minutes
    "robust_psro2": _shipped("robust_psro2.npz"),  # PSRO's second best response
    "mmd_2p": _shipped("mmd_2p.npz"),  # 'ppo' trained on by MMD in 2-player games (a member of 'mmd' there)
    "mmd_2p_step7": _shipped("mmd_2p_step7.npz"),  # that training's seventh step, F7 (the other member of 'mmd')
}
SHIPPED_VALUE = _shipped("ppo_packetrow_value.npz")  # the value network of 'ppo' (the search's default)
# the shipped agents that are mixture files, by agent name
SHIPPED_MIXTURES = {
    "robust": _shipped("robust.json"),  # a mixture of the robust_ policies in 2-player games, 'ppo' in others
    "mmd": _shipped("mmd.json"),  # mmd_2p and mmd_2p_step7 in 2-player games, 'ppo' in others
}


def __getattr__(name: str):
    if name == "SHIPPED_MIXTURE":  # the one shipped mixture's name until 'mmd' joined it; kept for one minor version
        warnings.warn("packetrow_agents.shipped.SHIPPED_MIXTURE is deprecated: use SHIPPED_MIXTURES['robust']",
                      DeprecationWarning, stacklevel=2)
        return SHIPPED_MIXTURES["robust"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
