"""``python -m retrograd``: the demo (see ``retrograd._demo``); ``--help`` lists its options."""

import sys

from ._demo import main

if __name__ == "__main__":
    sys.exit(main())
