"""Runs every test in this folder, as ``python3 -m unittest discover`` does, and counts them.

``--report FILE`` writes ``{"passed": N, "failed": M, "skipped": K}`` there, counting tests (a
test whose sub-tests fail counts once; a class or module that fails to set up counts as one
failure). ``-k PATTERN`` selects tests as unittest's ``-k`` does. Exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import unittest
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


class CountingResult(unittest.TextTestResult):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.passed = 0
        self.failed_ids: set[str] = set()

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self.passed += 1

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self.failed_ids.add(test.id())

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self.failed_ids.add(test.id())

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self.failed_ids.add(test.id())

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.failed_ids.add(test.id())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--report", help="write the counts to this file as JSON")
    parser.add_argument("-k", dest="patterns", action="append", default=[], help="only tests matching this pattern")
    options = parser.parse_args()
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    if options.patterns:
        loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in options.patterns]
    suite = loader.discover(start_dir=HERE, top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2, resultclass=CountingResult).run(suite)
    assert isinstance(result, CountingResult)
    counts = {"passed": result.passed, "failed": len(result.failed_ids), "skipped": len(result.skipped)}
    print(f"python tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    if options.report:
        with open(options.report, "w", encoding="utf-8") as file:
            json.dump(counts, file)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
