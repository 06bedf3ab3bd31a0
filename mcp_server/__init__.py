"""Packet Row over the Model Context Protocol: ``packetrow mcp`` serves games to any MCP client (an LLM's chat app
or agent) against the project's agents. An interface beside the browser app (``packetrow_web``): it imports the env
and the agents, and the ``mcp`` SDK only in ``server`` (the ``[mcp]`` extra)."""
