"""tests/suite_order.py: the order pytest-xdist hands the suite's files out in."""

from __future__ import annotations

from pathlib import Path

from tests.suite_order import LONGEST_FIRST, ordered

REPO = Path(__file__).resolve().parent.parent


def test_every_named_file_is_in_the_suite():
    """A renamed or removed file would silently go back to its place by test count."""
    missing = [name for name in LONGEST_FIRST if not (REPO / name).is_file()]
    assert not missing


def test_longest_files_first_the_rest_by_test_count():
    many, few = "tests/test_many.py", "tests/test_few.py"
    nodeids = [
        f"{few}::test_a",
        f"{LONGEST_FIRST[1]}::test_a",
        f"{many}::test_a",
        f"{many}::test_b[1]",
        f"{LONGEST_FIRST[0]}::test_a",
        f"{many}::test_c",
        f"{LONGEST_FIRST[1]}::test_b",
    ]
    order = [nodeids[index] for index in ordered(nodeids)]
    assert order == [
        f"{LONGEST_FIRST[0]}::test_a",
        f"{LONGEST_FIRST[1]}::test_a",
        f"{LONGEST_FIRST[1]}::test_b",
        f"{many}::test_a",
        f"{many}::test_b[1]",
        f"{many}::test_c",
        f"{few}::test_a",
    ]


def test_files_of_as_many_tests_keep_the_collections_order():
    nodeids = ["tests/test_b.py::test_x", "tests/test_a.py::test_x", "tests/test_c.py::test_x"]
    assert ordered(nodeids) == [0, 1, 2]
