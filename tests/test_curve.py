"""`packetrow curve`: the training curve PNG from a run's TensorBoard logs and eval.csv."""

import csv
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("matplotlib")

from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from packetrow_cli.main import main  # noqa: E402
from packetrow_train.curve import evaluation_rows, plot_run, training_win_rates  # noqa: E402
from packetrow_train.run_dir import EVAL_COLUMNS  # noqa: E402


def _fake_run(tmp_path, evaluations=((2000, 0.4, 0.3, 0.5), (3000, 0.6, 0.5, 0.7))):
    run = tmp_path / "run"
    writer = SummaryWriter(str(run / "tb" / "ppo_1"))
    for step, (two, four) in zip((1000, 2000, 3000), ((0.25, 0.1), (0.5, 0.2), (0.75, 0.3))):
        writer.add_scalar("selfplay/win_rate_2p", two, step)
        writer.add_scalar("selfplay/win_rate_4p", four, step)
        writer.add_scalar("selfplay/win_rate", (two + four) / 2, step)
    writer.close()
    with (run / "eval.csv").open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=EVAL_COLUMNS)
        out.writeheader()
        for step, rate, low, high in evaluations:
            out.writerow({"timesteps": step, "stage": "periodic", "opponent": "heuristic", "num_players": 2,
                          "games": 100, "win_rate": rate, "win_low": low, "win_high": high,
                          "fair_share": 0.5, "mean_rank": 1.5, "rank_low": 1.4, "rank_high": 1.6, "mean_vp": 9.0,
                          "vp_low": 8.0, "vp_high": 10.0, "train_seconds": step / 100})
    return run


def test_curve_reads_the_logs_and_writes_a_png(tmp_path):
    run = _fake_run(tmp_path)
    curves = training_win_rates(run)
    assert curves == {2: ([1000, 2000, 3000], pytest.approx([0.25, 0.5, 0.75])),
                      4: ([1000, 2000, 3000], pytest.approx([0.1, 0.2, 0.3]))}
    rows = evaluation_rows(run)
    assert [(r["timesteps"], r["win_rate"]) for r in rows] == [(2000.0, 0.4), (3000.0, 0.6)]
    path = plot_run(run, tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curve_plots_a_100_percent_evaluation_whose_top_rounded_below_it(tmp_path):
    """eval.csv files written before the Wilson rounding fix hold 0.9999999999999999 as the top of a 100% row."""
    run = _fake_run(tmp_path, evaluations=((2000, 1.0, 0.963, 0.9999999999999999),))
    assert plot_run(run).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curve_command(tmp_path, capsys):
    run = _fake_run(tmp_path)
    assert main(["curve", str(run)]) == 0
    assert (run / "curve.png").exists()
    assert str(run / "curve.png") in capsys.readouterr().out


def test_curve_rejects_a_directory_without_logs(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["curve", str(tmp_path)])
    assert "neither TensorBoard logs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["curve", str(tmp_path / "missing")])
    assert "no run directory" in capsys.readouterr().err


def test_the_shipped_curves_evaluations_redraw_from_models(tmp_path, capsys):
    """The model card's command: the shipped agent's evaluations panel from models/ppo_packetrow_eval.csv alone."""
    shipped = Path(__file__).resolve().parent.parent / "models" / "ppo_packetrow_eval.csv"
    out = tmp_path / "shipped.png"
    assert main(["curve", str(shipped), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and str(out) in capsys.readouterr().out
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit):
        main(["curve", str(tmp_path / "notes.csv")])
    assert "is not an eval.csv written by packetrow train" in capsys.readouterr().err
