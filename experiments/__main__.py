"""``python -m experiments NAME [options]``: the launcher (experiments/launcher.py)."""

import sys

from experiments.launcher import main

if __name__ == "__main__":
    sys.exit(main())
