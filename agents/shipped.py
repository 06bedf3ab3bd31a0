"""The shipped models by name: the files of ``models/`` (installed as the package data ``packetrow_models``) that
agent specs name without a path (``ppo``, ``ppo:robust_br60``, ``robust``); docs/model_card.md says what each is."""

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
}
SHIPPED_VALUE = _shipped("ppo_packetrow_value.npz")  # the value network of 'ppo' (the search's default)
SHIPPED_MIXTURE = _shipped("robust.json")  # the agent 'robust': a mixture of the robust_ policies
