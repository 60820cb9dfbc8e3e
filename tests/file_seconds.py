"""Write ``tests/file_seconds.json``: each test file's seconds in a full run, which ``conftest.py``
uses to schedule the longest files first under ``--dist loadfile``.

Usage (a full run as CI makes it, its report kept)::

    python -m pytest -q -n 2 --dist loadfile -p no:cacheprovider --durations=0 phsym tests | tee run.log
    python tests/file_seconds.py run.log

The setup, call and teardown phases of every listed test are summed by file (pytest hides phases
under 5 ms: a file with none listed is counted by its number of tests, ``conftest.SECONDS_PER_TEST``).
Seconds are rounded to tenths; only the order they give matters.
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent / "file_seconds.json"
_LINE = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(\S+?)::")


def file_seconds(lines) -> dict:
    """Seconds by file from the lines of pytest's ``--durations`` report."""
    total: dict = defaultdict(float)
    for line in lines:
        m = _LINE.match(line)
        if m:
            total[m.group(2)] += float(m.group(1))
    return {f: round(s, 1) for f, s in sorted(total.items())}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    seconds = file_seconds(Path(argv[0]).read_text().splitlines())
    OUT.write_text(json.dumps({"made_by": "python tests/file_seconds.py LOG (see its docstring)",
                               "seconds": seconds}, indent=1) + "\n")
    print(f"{OUT}: {len(seconds)} files, {sum(seconds.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
