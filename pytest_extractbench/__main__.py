"""``python -m pytest_extractbench ...`` is the ``extractbench`` command."""

import sys

from .cli import main

sys.exit(main())
