"""The notebooks run top to bottom in a python3 kernel (nbclient) without errors and show their results; they are
committed without outputs."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TRAINING_STEPS = 2048  # the training notebook reads PACKETROW_NOTEBOOK_STEPS (default 4096)


def execute(name: str):
    """Run a notebook from its own directory, as Jupyter does; a failing cell raises CellExecutionError."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(notebook, timeout=600, startup_timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return notebook


def text_of(notebook) -> str:
    """Everything the code cells printed or displayed as text, in order."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                # a busy kernel may flush one print in several stream messages: join them as written
                parts.append(output["text"])
            elif output["output_type"] in ("display_data", "execute_result"):
                data = output["data"]
                parts.append("\n" + data.get("text/markdown", data.get("text/plain", "")) + "\n")
        parts.append("\n")
    return "".join(parts)


def images(notebook) -> int:
    """The number of PNG images the notebook displayed."""
    return sum("image/png" in output.get("data", {}) for cell in notebook.cells for output in cell.get("outputs", []))


@pytest.mark.parametrize("name", ["01_quickstart.ipynb", "02_training.ipynb"])
def test_notebooks_are_committed_without_outputs(name):
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


def test_quickstart_notebook_plays_renders_inspects_and_saves():
    notebook = execute("01_quickstart.ipynb")
    text = text_of(notebook)
    assert "legal actions:" in text  # the rendered table of the agent to act
    assert "WINNER" in text and "final rewards: {'player_0'" in text  # a full game, rendered with its scores
    assert "| `current_supply` | 121 |" in text  # the generated layout table
    assert "own hand:" in text
    assert "the loaded game equals the original" in text and "both games continue identically" in text
    assert "to act again at the saved position" in text


def test_training_notebook_trains_plots_and_plays(monkeypatch):
    pytest.importorskip("sb3_contrib", reason="the training notebook needs the [train] extra")
    monkeypatch.setenv("PACKETROW_NOTEBOOK_STEPS", str(TRAINING_STEPS))  # the kernel inherits the environment
    notebook = execute("02_training.ipynb")
    text = text_of(notebook)
    assert f"trained {TRAINING_STEPS} learner steps" in text
    assert images(notebook) == 2  # the learning curve and the evaluation win rates
    assert "rows in eval.csv" in text and "win rate [95% CI]" in text
    assert text.count("20 games of 2 players") == 3  # the trained agent against the heuristic and random, the shipped one
    assert "shipped model: ppo_packetrow" in text
    assert "\nppo " in text and "\nheuristic " in text
