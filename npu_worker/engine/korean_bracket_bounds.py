"""A bound whose side is a number's product with a bracket, "x ≥ 2(x - 1)", "y < 3(x + 2)이면", for `korean_reading`.

`korean_ranges.BOUND` took the number alone for the bound's amount and said its word inside the product: x 2 이상(x 빼기
1), y 3 미만(x 더하기 2)이면. Here the product is the amount, read by `korean_ranges.bound` as any other (the subject
after a formula's last number, the particle in the bound word's form): x 2(x 빼기 1) 이상, x 더하기 1이 2(x 빼기 1) 이상.
Only a bracket of a formula's characters, glued to its number: "x < 10(단위: m)" is a note. The side may go on with
up to two more brackets and three terms added or taken, each a number or a letter, "x ≥ 2(x - 1) + 3", "y < 3(x + 2) - 1"
(k11 read x 2 이상(x 빼기 1) 더하기 3): x 2(x 빼기 1) 더하기 3 이상; a term of its own product, "+ 3x", leaves it as before. A word of three letters or more makes it a note
too, "p < 0.05(two-sided)", "n > 30(approx.)" (k11 read p 0 점 영오(two-sided) 미만, the note inside the bound).
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE

# Applied before `korean_ranges.BOUND`, with its function: the same sign's look-behinds, the product in the amount's group.
BRACKET_BOUND = re.compile(
    r"(?: (?=[<>≤≥]))?(?=[<>≤≥])(?<![<>=\-])([<>≤≥]) ?"
    r"([-−]?\d{1,6}(?:\.\d{1,6})?\((?=[^)]{0,30}[A-Za-zα-ω])(?![^)]{0,30}[A-Za-z]{3})[A-Za-zα-ω\d+\-−*/^ .]{1,30}\)"
    r"(?:\([A-Za-zα-ω\d+\-−*/^ .]{1,30}\)){0,2}"  # "2(x - 1)(x + 1)": a product of brackets
    r"(?: ?[-+−] ?(?:\d{1,6}(?:\.\d{1,6})?|[A-Za-z])(?![A-Za-z\d(])){0,3})"  # "2(x - 1) + 3": terms after
    rf"(?![A-Za-z\d_(]|[.,]\d| ?[-+−×*/^] ?[\w(])(?:{PARTICLE})?"  # a comma or a stop after, "… + 3, x ≤ 10"
)
