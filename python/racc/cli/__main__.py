"""``python -m racc.cli``: the ``racc`` command."""

import sys

from racc.cli import main

sys.exit(main())
