"""``python -m racc`` = the ``racc`` command."""

import sys

from racc.cli import main

sys.exit(main())
