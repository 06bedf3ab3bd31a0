"""``python -m packetrow_cli``: the ``packetrow`` command."""

import sys

from .main import main

if __name__ == "__main__":
    sys.exit(main())
