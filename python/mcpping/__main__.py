"""``python -m mcpping``: the mcpping command."""

from .cli import main

raise SystemExit(main())
