"""``python -m fastsw``: the same command line as the ``fastsw`` console script."""

import sys

from fastsw.cli import main

if __name__ == "__main__":
    sys.exit(main())
