"""``python -m exla.demo``: the same as ``python -m exla demo``."""

import sys

from exla.demo import main

if __name__ == "__main__":
    sys.exit(main())
