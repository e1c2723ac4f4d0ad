"""``python -m cutelab``: the cutelab command line (see cutelab.cli)."""

from .cli import main

raise SystemExit(main())
