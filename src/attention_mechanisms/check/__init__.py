"""``attention-check``: check a learner's own chapter-3 code against the book.

- `cells` reads the code cells of a notebook or Python file;
- `runner` runs them in a separate process (`_worker`), with a time limit per cell and in
  total, then has the worker examine what they defined (`analyse`);
- `components` places each class or function in a role of the book;
- `checks` runs the named checks, comparing with the package's classes (`reference`);
- `report` prints the human report or the JSON object, and `cli` is the command.

Run it as ``attention-check PATH`` or ``python -m attention_mechanisms.check PATH``.
"""
