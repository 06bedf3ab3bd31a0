"""The ``packetrow`` command line (``packetrow_cli.main``), above every other package."""
