"""``python -m exla``: see :mod:`exla.cli`."""

import sys

from exla.cli import main

if __name__ == "__main__":
    sys.exit(main())
