"""``attention-check``: check a learner's own chapter-3 code against the book, and their own
version of today's attention against the package's.

- `cells` reads the code cells of a notebook or Python file;
- `runner` runs them in a separate process (`_worker`), with time and memory limits, then
  has the worker examine what they defined (`analyse`);
- `components` places each class or function in a role of the book;
- `probes` are the shapes each class runs at, `subject` runs it there once, `weights`
  reads its weights as the book's roles and `reference` computes the book's output (and
  variants that differ in one aspect) from them;
- `todays` checks a class in one of today's roles (`GroupedQueryAttention`...) against the
  package's class holding the learner's weights, which `reading` takes by name or shape;
- `checks` is the table of named checks and the loop that runs them: `class_checks`,
  `function_checks` and `dropout` are the checks, `causes` names what went wrong from the
  error or shape, `stages` from how the module behaves (projections exchanged or reused,
  parameters unused, the divisor of the scores measured);
- `messages` holds every word of the report in four languages (``messages/*.toml``);
  `report` prints the human report, the JSON object or the summary table, and `cli` is
  the command.

Run it as ``attention-check PATH`` or ``python -m attention_mechanisms.check PATH``.
"""
