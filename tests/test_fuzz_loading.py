"""Issue 11: a seeded mutation fuzzer over saved games and card catalogues (tests/fuzzing.py).

Every mutated input is refused with a ValueError naming the problem, or loads to a game that saves as JSON,
loads again, gives observations inside the declared space and plays to the end with random legal actions,
every card in one place and cash never negative. ``benchmarks/fuzz_loading.py`` runs the same for minutes.
"""

from __future__ import annotations

from tests.fuzzing import fuzz_catalogues, fuzz_saved_games


def _report(failures) -> str:
    return "\n\n".join(f"input: {what}\n{why}" for what, why in failures[:3])


def test_mutated_saved_games_are_refused_or_sound():
    stats, failures = fuzz_saved_games(seed=11, count=1200)
    assert not failures, _report(failures)
    assert stats["refused"] + stats["loaded"] == stats["inputs"] == 1200
    assert stats["refused"] > 500 and stats["loaded"] > 50 and stats["steps"] > 5000  # both outcomes exercised


def test_mutated_catalogues_are_refused_or_sound(tmp_path):
    stats, failures = fuzz_catalogues(seed=11, count=300, folder=tmp_path)
    assert not failures, _report(failures)
    assert stats["refused"] + stats["loaded"] == stats["inputs"] == 300
    assert stats["refused"] > 100 and stats["loaded"] > 20
