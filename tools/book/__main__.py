"""``python -m book``: see `book.cli`."""

from book.cli import main

raise SystemExit(main())
