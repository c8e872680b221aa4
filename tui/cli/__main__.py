"""``python -m tui.cli``: the command line, as hooks installed by delegate call it."""

import sys

from tui.cli import main

if __name__ == "__main__":  # imported by name (a walk over the package), it does nothing
    sys.exit(main())
