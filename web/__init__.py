"""Play and watch Packet Row in the browser (``packetrow serve``; needs the ``[web]`` extra, Flask).

The server holds every game; the page receives only what the person's seat may know (``views``, built on
``packetrow_env.knowledge``). ``create_app`` builds the Flask app, ``serve`` runs it.
"""

from .app import create_app, serve

__all__ = ["create_app", "serve"]
