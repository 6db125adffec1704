"""``python -m attention_mechanisms.check``: see `attention_mechanisms.check.cli`."""

from .cli import main

if __name__ == "__main__":  # not when a tool walks the package's modules
    raise SystemExit(main())
