"""Behaviour cloning: a policy export fine-tuned to play as an agent played in recorded games (``packetrow imitate``).

What it is for: an opponent model for the search (``search:opponents=PATH``), which plays the other seats of
its rollouts with a policy that predicts how the table plays. A tournament's records hold every move of every
seat; replaying them (``records.iter_replay``) gives what each seat of one agent saw (the observation a policy
reads, in its mode and encoding) and what it did, at every decision with a choice. ``imitate`` starts from a
policy export (the shipped policy by default: it already knows the game) and fine-tunes all its weights, the
card embedding included, by cross-entropy to those moves (Adam, minibatches of 256). It holds out a fifth of
the games (whole games, so that the held-out moves come from deals it never trained on) and keeps the epoch
with the lowest held-out cross-entropy: a model of a stochastic player should fit its probabilities, not just
its favourite move. It reports the held-out agreement (the model's most likely move is the recorded one) and
cross-entropy before and after.

The network runs in torch as ``NumpyPolicy.logits`` runs it in numpy (``TorchPolicy``; tests/test_imitation.py
holds the two equal), and comes back as a ``NumpyPolicy`` export.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from packetrow_agents.policy import NumpyPolicy, PolicyAgent, check_model_path, load_policy
from packetrow_agents.shipped import SHIPPED_POLICIES
from packetrow_arena.records import iter_replay, read_records
from packetrow_arena.tournament import positive_int
from packetrow_env.seat_view import SeatView
from packetrow_env.user_files import check_output_file

BATCH = 256


class ImitationError(ValueError):
    """Imitation was asked for wrongly (no such agent in the records, too few games, bad settings)."""


@dataclass
class Decisions:
    """One agent's recorded decisions with a choice: what its seat's policy input was and what it played."""

    observations: np.ndarray  # float32[N, D], in the base policy's mode and encoding
    masks: np.ndarray  # bool[N, A]: the legal actions among the policy's outputs
    actions: np.ndarray  # int64[N]
    games: np.ndarray  # int64[N]: which game (numbered across the files), for a split by game
    # float32[N, A] or None: a distribution over the actions to fit instead of the played action (a search's
    # policy, for distilling it: ``SearchAgent.last_policy``), zero on illegal actions
    targets: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)


def recorded_decisions(paths, agent: str, player: PolicyAgent) -> Decisions:
    """The decisions with a choice of every seat whose spec is ``agent`` in the record files ``paths``, read as
    ``player``'s policy reads a seat (its mode, encoding and outputs)."""
    observations, masks, actions, games, found = [], [], [], [], set()
    number = 0
    for path in paths:
        records = read_records(path)
        for record in records.games:
            found.update(record["agents"])
            if agent in record["agents"]:
                for game, seat, action in iter_replay(records, record["index"]):
                    if record["agents"][seat] != agent:
                        continue
                    view = SeatView(game, seat, player.observation_mode)
                    read = player.read(view)
                    if isinstance(read, int) or read[1].sum() < 2:  # no choice, or one the policy cannot express
                        continue
                    observations.append(read[0])
                    masks.append(read[1])
                    actions.append(action)
                    games.append(number)
            number += 1
    if not actions:
        raise ImitationError(f"no decision of agent {agent!r} in {', '.join(map(str, paths))}; the agents recorded "
                             f"there: {', '.join(sorted(found)) or 'none'} (give one exactly as recorded)")
    return Decisions(np.asarray(observations, np.float32), np.asarray(masks, bool), np.asarray(actions, np.int64),
                     np.asarray(games, np.int64))


class TorchPolicy(torch.nn.Module):
    """``NumpyPolicy.logits`` in torch: the compact input stage, the hidden layers, the action layer, with trainable
    copies of ``policy``'s weights."""

    def __init__(self, policy: NumpyPolicy):
        super().__init__()
        self.policy = policy
        layers = list(zip(policy.weights, policy.biases)) + [(policy.action_weight, policy.action_bias)]
        self.weights = torch.nn.ParameterList(torch.nn.Parameter(torch.tensor(w)) for w, _ in layers)
        self.biases = torch.nn.ParameterList(torch.nn.Parameter(torch.tensor(b)) for _, b in layers)
        self.squash = torch.tanh if policy.activation == "tanh" else torch.relu
        self.compact = policy.embedding is not None
        if self.compact:
            positions = np.arange(policy.observation_size)
            self.embedding = torch.nn.Parameter(torch.tensor(policy.embedding))
            self.register_buffer("indices", torch.as_tensor(positions[policy.index_floats]))
            self.register_buffer("rest", torch.as_tensor(positions[policy.rest_floats]))

    def forward(self, x):
        if self.compact:  # as NumpyPolicy._compact_product: the index floats' embeddings, then the rest
            index = x[:, self.indices].round().clamp(0, len(self.embedding) - 1).long()
            x = torch.cat([self.embedding[index].reshape(len(x), -1), x[:, self.rest]], dim=1)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < len(self.weights) - 1:
                x = self.squash(x)
        return x

    def export(self, metadata: dict) -> NumpyPolicy:
        """The module's weights as a NumpyPolicy of the starting policy's kind, with ``metadata``."""
        policy = self.policy
        weights = [w.detach().cpu().numpy() for w in self.weights]
        biases = [b.detach().cpu().numpy() for b in self.biases]
        return NumpyPolicy(weights[:-1], biases[:-1], weights[-1], biases[-1], policy.activation,
                           policy.observation_mode, metadata,
                           self.embedding.detach().cpu().numpy() if self.compact else None,
                           policy.index_slices if self.compact else None)


def torch_policy(policy: NumpyPolicy) -> TorchPolicy:
    """A torch module computing ``policy.logits`` with trainable copies of its weights."""
    return TorchPolicy(policy)


def check_settings(epochs: int, learning_rate: float, holdout: float) -> None:
    """An ImitationError unless the settings of ``imitate`` are in range."""
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ImitationError(f"epochs must be a whole number of at least 1, got {epochs!r}")
    if not 0 < learning_rate < 1:
        raise ImitationError(f"the learning rate must lie between 0 and 1, got {learning_rate!r}")
    if not 0 < holdout < 1:
        raise ImitationError(f"holdout must be a fraction of the games between 0 and 1, got {holdout!r}")


def imitate(decisions: Decisions, policy: NumpyPolicy, epochs: int = 20, learning_rate: float = 3e-4,
            holdout: float = 0.2, seed: int = 0, progress: bool = False, metadata: dict | None = None):
    """(the fine-tuned NumpyPolicy, a report): ``policy`` trained towards ``decisions``' actions (or, where
    ``decisions.targets`` is given, towards those distributions: the cross-entropy to them, and agreement with
    their most likely action), the epoch with the lowest held-out cross-entropy kept; the report gives the
    held-out agreement and cross-entropy before and after, the epoch kept and the counts."""
    check_settings(epochs, learning_rate, holdout)
    games = np.unique(decisions.games)
    held = max(1, round(holdout * len(games)))
    if held >= len(games):
        raise ImitationError(f"{len(games)} recorded game(s) cannot be split into training and held-out games "
                             f"(holdout {holdout}): record more games")
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    test = np.isin(decisions.games, rng.choice(games, held, replace=False))
    train_rows, test_rows = np.flatnonzero(~test), np.flatnonzero(test)
    x = torch.as_tensor(decisions.observations)
    masks = torch.as_tensor(decisions.masks)
    if decisions.targets is None:
        y = torch.as_tensor(decisions.actions)
    else:
        if decisions.targets.shape != decisions.masks.shape:
            raise ImitationError(f"targets must be one distribution over the {decisions.masks.shape[1]} actions a "
                                 f"decision, float[{len(decisions)}, {decisions.masks.shape[1]}]; got shape "
                                 f"{decisions.targets.shape}")
        y = torch.as_tensor(decisions.targets, dtype=torch.float32)
    model = torch_policy(policy)

    def masked_logits(rows):
        return model(x[rows]).masked_fill(~masks[rows], -1e9)

    def measure(rows) -> tuple[float, float]:
        with torch.no_grad():
            logits = masked_logits(rows)
            best = y[rows] if y.dim() == 1 else y[rows].argmax(1)
            return ((logits.argmax(1) == best).double().mean().item(),
                    torch.nn.functional.cross_entropy(logits, y[rows]).item())

    before = measure(test_rows)
    best = (before[1], 0, {k: v.clone() for k, v in model.state_dict().items()})
    optimiser = torch.optim.Adam(model.parameters(), lr=learning_rate)
    epochs_run = range(1, epochs + 1)
    if progress:
        epochs_run = tqdm(epochs_run, desc="imitate", unit="epoch", file=sys.stderr)
    for epoch in epochs_run:
        order = rng.permutation(train_rows)
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            loss = torch.nn.functional.cross_entropy(masked_logits(rows), y[rows])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        entropy = measure(test_rows)[1]
        if entropy < best[0]:
            best = (entropy, epoch, {k: v.clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[2])
    after = measure(test_rows)
    report = {"decisions": len(decisions), "games": len(games), "held_out_games": held,
              "held_out_decisions": len(test_rows), "epoch_kept": best[1],
              "agreement_before": before[0], "agreement_after": after[0],
              "cross_entropy_before": before[1], "cross_entropy_after": after[1]}
    return model.export({**policy.metadata, **(metadata or {}), "imitation": report}), report


def _run_imitate_command(args) -> int:
    try:
        out = Path(args.out)
        if out.suffix != ".npz":
            raise ImitationError(f"--out must name a .npz file (a policy export), got {args.out!r}")
        if out.exists() and not args.overwrite:
            raise ImitationError(f"{out} exists; give --overwrite to replace it")
        check_output_file(out, ImitationError, "--out", makes_folders=True)  # before the records are replayed
        check_settings(args.epochs, args.lr, args.holdout)  # before the records are replayed
        base = args.policy if args.policy in SHIPPED_POLICIES else str(check_model_path(args.policy))
        player = PolicyAgent(policy=load_policy(base))
        decisions = recorded_decisions(args.records, args.agent, player)
        policy, report = imitate(decisions, player.policy, args.epochs, args.lr, args.holdout, args.seed,
                                 progress=not args.no_progress,
                                 metadata={"config_name": f"imitation of {args.agent}", "base_policy": base,
                                           "records": [str(p) for p in args.records]})
    except ValueError as error:  # ImitationError, RecordError, ModelFormatError: the user's input
        print(f"packetrow imitate: error: {error}", file=sys.stderr)
        return 2
    policy.save(out)
    print(f"{report['decisions']} decisions of {args.agent} in {report['games']} games; held out "
          f"{report['held_out_games']} games ({report['held_out_decisions']} decisions)")
    print(f"held-out agreement {report['agreement_before']:.1%} -> {report['agreement_after']:.1%}, cross-entropy "
          f"{report['cross_entropy_before']:.3f} -> {report['cross_entropy_after']:.3f} (epoch {report['epoch_kept']})")
    print(f"wrote {out}")
    return 0


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow imitate`` to its parser."""
    parser.description = ("Replay record files (packetrow tournament --out), take every decision with a choice of the "
                          "seats AGENT played, and fine-tune a policy export towards those moves by cross-entropy, "
                          "keeping the epoch with the lowest cross-entropy on held-out games; writes a policy export "
                          "for search:opponents=PATH (needs the [train] extra).")
    parser.add_argument("records", nargs="+", type=Path, metavar="RECORDS", help="records.jsonl files")
    parser.add_argument("--agent", required=True, metavar="SPEC",
                        help="the agent to imitate, its spec exactly as recorded, e.g. "
                             "ismcts:iters=4641,rollout=random")
    parser.add_argument("--out", required=True, metavar="PATH", help="the policy export to write (.npz)")
    parser.add_argument("--policy", default="ppo", metavar="POLICY",
                        help="the export to start from: a shipped policy's name ('ppo', the default) or a .npz path")
    parser.add_argument("--epochs", type=positive_int, default=20, help="passes over the training moves (default 20)")
    parser.add_argument("--lr", type=float, default=3e-4, help="Adam's learning rate (default 3e-4)")
    parser.add_argument("--holdout", type=float, default=0.2,
                        help="fraction of the games held out to choose the epoch (default 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and the minibatches (default 0)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_imitate_command, parser=parser)
