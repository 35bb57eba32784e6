"""``python -m flexmbs ...`` is the ``flexmbs`` command (flexmbs.cli.main)."""
import sys

from flexmbs.cli.main import main

sys.exit(main())
