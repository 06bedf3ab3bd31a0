"""The envs behind Packet Row's Gymnasium id (``packetrow_env.gymnasium_ids``), with opponents named by agent spec.

``gymnasium.make("packetrow/SingleAgent-v2", **kwargs)`` calls ``single_agent_env(**kwargs)``, a
``packetrow_env.single_agent_env.SingleAgentEnv``; ``gymnasium.make_vec("packetrow/SingleAgent-v2", num_envs,
**kwargs)`` calls ``vector_env(num_envs, **kwargs)``, a ``packetrow_env.vector.gymnasium_env.PacketRowVectorEnv``.
Each takes its env's keyword arguments (an unknown one is a ValueError listing them) and builds ``opponents`` here,
the layer that knows agents by name (``registry``): see ``opponents_from``. Default opponents: ``"random"``.
"""

from __future__ import annotations

import inspect

from packetrow_env.game_info import GAME_TYPE
from packetrow_env.vector.gymnasium_env import PacketRowVectorEnv
from packetrow_env.single_agent_env import SingleAgentEnv

from .registry import make_agent, split_specs


def single_agent_env(opponents="random", **kwargs) -> SingleAgentEnv:
    """``SingleAgentEnv(opponents=opponents_from(opponents), **kwargs)`` (``gymnasium.make``'s entry point)."""
    _check_options(SingleAgentEnv, kwargs)
    return SingleAgentEnv(opponents=opponents_from(opponents), **kwargs)


def vector_env(num_envs: int = 16, opponents="random", **kwargs) -> PacketRowVectorEnv:
    """``PacketRowVectorEnv(num_envs, opponents=opponents_from(opponents, seed), **kwargs)`` (``gymnasium.make_vec``'s
    vector entry point)."""
    _check_options(PacketRowVectorEnv, kwargs)
    seed = kwargs.get("seed")
    return PacketRowVectorEnv(num_envs, opponents=opponents_from(opponents, 0 if seed is None else seed), **kwargs)


def opponents_from(opponents, seed: int = 0):
    """``opponents`` with every agent spec built by ``make_agent`` (agent k of a list seeded ``seed + k``).

    A spec (``"heuristic"``, ``"ppo"``, ``"ppo:runs/x/model.npz"``, ``"ismcts:iters=50"``) is that agent at every
    opponent seat; a list of specs, or one string of them (``"ppo,heuristic"``, read by ``split_specs``), is one
    agent per opponent seat, clockwise from the learner. Anything else (agents of the protocol, callables
    ``f(observation, action_mask)``, lists mixing them with specs, the single env's samplers, the vector env's
    ``OpponentTable``) goes to the env as it is.
    """
    if isinstance(opponents, str):
        specs = split_specs(opponents)
        return make_agent(specs[0], seed) if len(specs) == 1 else opponents_from(specs, seed)
    if isinstance(opponents, (list, tuple)):
        return [make_agent(o, seed + k) if isinstance(o, str) else o for k, o in enumerate(opponents)]
    return opponents


def _check_options(env_class: type, kwargs: dict) -> None:
    """A ValueError naming the keyword arguments ``env_class`` does not take, and the ones it does."""
    allowed = list(inspect.signature(env_class).parameters)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(f"{GAME_TYPE.gymnasium_id} ({env_class.__name__}) has no option "
                         f"{', '.join(map(repr, unknown))}; its options: {', '.join(allowed)}")
