"""The RLlib league counts main's wins as tournaments do: a win shared by k counts 1/k (stats.win_shares).

Runs without Ray: the league's counting reads an episode through two methods, faked here.
"""

import pytest

from packetrow_train.rllib_selfplay import MAIN, League, agent_seat, main_win_share


def scores(*winners: bool) -> list[dict]:
    return [{"vp": 10, "cash": 3, "winner": w} for w in winners]


class FakeEpisode:
    """What main_win_share reads of RLlib's MultiAgentEpisode: the last infos and who plays each seat."""

    def __init__(self, final_scores: list[dict], main_seat: int | None):
        self.final_scores, self.main_seat = final_scores, main_seat

    def get_infos(self, index):
        assert index == -1
        return {f"player_{p}": {"scores": self.final_scores} for p in range(len(self.final_scores))}

    def module_for(self, agent):
        return MAIN if agent_seat(agent) == self.main_seat else "main_v1"


@pytest.mark.parametrize("final, seat, share", [
    (scores(True, True, False), 0, 0.5),          # a win shared by two: half a win, not none
    (scores(False, True, True, True), 3, 1 / 3),
    (scores(True, False), 0, 1.0),
    (scores(True, False, False), 2, 0.0)])
def test_main_wins_count_their_share(final, seat, share):
    assert main_win_share(FakeEpisode(final, seat)) == pytest.approx(share)


def test_an_episode_without_main_is_not_counted():
    assert main_win_share(FakeEpisode(scores(True, False), None)) is None


def test_agent_seats_and_the_league_opponents():
    assert agent_seat("player_0") == 0 and agent_seat("player_4") == 4
    league = League(num_players=3, recent_share=0.5)
    assert league.opponents() == ["random"]
    league.versions = 2
    assert league.opponents() == ["main_v1", "main_v2"]
