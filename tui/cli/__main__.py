"""``python -m tui.cli``: the command line, as hooks installed by delegate call it."""

import sys

from tui.cli import main

sys.exit(main())
