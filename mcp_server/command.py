"""``packetrow mcp``: serve games to an MCP client over stdio (the ``[mcp]`` extra).

The SDK is imported when the server runs, so that ``packetrow mcp --help`` and the command's table work without
the extra, and a missing extra is a one-line error naming it.
"""

from __future__ import annotations

import sys


def run_command(args) -> int:
    """Run the server until the client closes stdin."""
    try:
        from .server import serve
    except ImportError as error:
        print(f"packetrow mcp: error: {error}; install the [mcp] extra: pip install 'packetrow[mcp]'", file=sys.stderr)
        return 2
    serve()
    return 0


def add_arguments(parser) -> None:
    """Add the arguments of ``packetrow mcp`` to its parser (it has none: the client speaks over stdio)."""
    parser.description = ("Serve Packet Row to an MCP client over stdio: tools new_game, observe, legal_moves, play "
                          "and result, so that an LLM plays against the project's agents. Start it from the client's "
                          "configuration (command: packetrow, args: [mcp]).")
    parser.set_defaults(run=run_command)
