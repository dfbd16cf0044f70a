"""The copulas a sign's term ends with ("x ≠ 0이면", "A ⊇ B일 때", "x → 0인") and the forms a lecturer turns them
into: negated after "≠", "∉", "⊄" (아니면), as 하다 after "⊇"'s 포함 (포함할 때), as 가다 after a limit's 로 (0으로
가는). One table, which `korean_arrows` and `korean_sets` read, so that a copula one of them learns is said by both.
"""

from __future__ import annotations

# copula: (negated, as 하다, as 가다)
_FORMS = {
    "일 때": ("아닐 때", "할 때", "갈 때"),
    "이면": ("아니면", "하면", "가면"),
    "면": ("아니면", "하면", "가면"),
    "인": ("아닌", "하는", "가는"),
    "일": ("아닐", "할", "갈"),
    "이고": ("아니고", "하고", "가고"),
    "이며": ("아니며", "하며", "가며"),
    # a reason's, a condition's, a contrast's, "x ≠ 0이므로", "x ∈ A이지만", "x → 0이라면" (korean14: x 낫 이퀄 0이므로,
    # x ∈ A이지만 unsaid, x에서 0이라면): x가 0이 아니므로, x가 A의 원소이지만, x가 0으로 간다면
    "이므로": ("아니므로", "하므로", "가므로"),
    "이라면": ("아니라면", "한다면", "간다면"),
    "이면서": ("아니면서", "하면서", "가면서"),
    "이지만": ("아니지만", "하지만", "가지만"),
    "이니까": ("아니니까", "하니까", "가니까"),
    # a supposition's, "x ∈ A라고 하자", "A ⊂ B라면" (korean14: the sign unsaid): x가 A의 원소라고 하자, A가 B의 부분집합이라면
    "이라고": ("아니라고", "한다고", "간다고"),
    "라고": ("아니라고", "한다고", "간다고"),
    "라면": ("아니라면", "한다면", "간다면"),
    "입니다": ("아닙니다", "합니다", "갑니다"),
    "입니까": ("아닙니까", "합니까", "갑니까"),
    "이다": ("아니다", "한다", "간다"),
}
NEGATED_COPULAS = {copula: forms[0] for copula, forms in _FORMS.items()}
DOING_COPULAS = {copula: forms[1] for copula, forms in _FORMS.items()}
# The copulas that end a statement ("a ≠ 0입니다": its term a topic, a는 0이 아닙니다), not a clause.
STATEMENT_COPULAS = ("입니다", "입니까", "이다")
# A limit's copula ends a clause ("x → 0일 때"), never a statement.
GOING_COPULAS = {copula: forms[2] for copula, forms in _FORMS.items() if copula not in STATEMENT_COPULAS}
