"""Review of korean14 (rvk14): what its rules read that no test of theirs covered, each against what korean14 read
(the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean14: async이고 0, a chain of equalities across a query's "&"
        ("/synth_batch?async=1&async=0", "/synth_batch?async는 1&async는 0"),
        ("a=1&token=s3cret-value", "a는 1&token는 s3cret-value"),  # korean14: token이고
        # korean14: document.title이고 'owned', the chain's term taken through a quote
        (
            "<img src=x onerror=\"document.title='owned'\">",
            "<img src는 x onerror는 \"document.title는 'owned'\">",
        ),
        # a chain of terms still says its next link the same
        ("따라서 f(1) = 2 = g(1)이다.", "따라서 f(1)은 2이고 g(1)이다."),
        ("p = q = r = s", "p는 q이고 r이고 s"),
    ],
)
def test_a_query_strings_pairs_are_no_chain_of_equalities(written: str, said: str) -> None:
    assert spoken(written) == said
