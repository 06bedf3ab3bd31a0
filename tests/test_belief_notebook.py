"""The beliefs notebook (notebooks/03_beliefs.ipynb) runs top to bottom and shows its results, as the others do."""

import nbformat

from tests.test_notebooks import NOTEBOOKS, execute, images, text_of

NAME = "03_beliefs.ipynb"


def test_beliefs_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOKS / NAME, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


def test_beliefs_notebook_plots_the_posterior_and_uses_the_api():
    notebook = execute(NAME)
    text = text_of(notebook)
    assert images(notebook) == 1  # the posterior over seat 1's starting contract during the game
    assert "seat 1's starting contract: contract" in text and "prior of the true contract: 0.091" in text
    assert "rows sum to 1: True" in text
    assert "probabilities sum to 1.0" in text and "a determinisation deals seat 1 contract" in text
    assert "| nll |" in text and "| kl | 0 |" in text
