"""Sphinx configuration of the packetrow docs: MyST Markdown pages and an API reference from the docstrings."""

from importlib.metadata import version as installed_version

project = "packetrow"
author = "the packetrow authors"
release = installed_version("packetrow")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}  # autosummary writes its stubs as .rst
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # the pages link to each other's sections by their GitHub-style anchors

autosummary_generate = True
autosummary_imported_members = False
# a name is documented in the module that defines it, not again where a package re-exports it
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
# the [ray] extra pins its own gymnasium and lives in an environment of its own (.ci/run): documented without it;
# the MCP server's SDK (the [mcp] extra) and OpenSpiel (the [openspiel] extra) likewise, so that the docs build
# without them
autodoc_mock_imports = ["ray", "mcp", "pyspiel", "open_spiel"]

html_theme = "furo"
html_title = f"packetrow {release}"


def _plain_text_blocks(app, what, name, obj, options, lines):
    """Set the docstrings' indented runs apart by blank lines: they are plain text, where reST wants them."""
    out = []
    for line in lines:
        previous = out[-1] if out else ""
        if line.strip() and previous.strip() and _indent(line) != _indent(previous):
            out.append("")
        out.append(line)
    lines[:] = out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_blocks)
