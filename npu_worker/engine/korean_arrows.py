"""Arrows and relation signs of Korean slides read with the particles a lecturer says them with: "A → B로"
(A에서 B로), "x → 0" (x가 0으로; "x → 0일 때": x가 0으로 갈 때), "p → q" (p면 q), "높은 온도 ⇒ 수명 단축" (높은
온도면), a flow "수집 → 전처리 → 학습" (수집, 전처리, 학습), "충전 ↔ 방전" (충전과 방전), "a ← b" (a는 b, as "="), "x ≠ 0" (x는
0이 아님; "x ≠ 0일 때": x가 0이 아닐 때), and the marks "©", "™", "®".

espeak-ng 1.52's Korean voice said nothing for "→", "←", "⇒", "↔", "©", "™" and "®" (the arrow's link between
two terms lost; "®" and "™" cut a particle from its word, "삼성®의": 삼성 의), "=>" as English "equals" and
"≠" as English "not equal to". An arrow that opens a line is a bullet: not read. A part of `korean_reading`,
which applies these last, when the words before a sign are said as they will be (the particle follows them).
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_chains import SUBJECT_NOUN, subject_before
from .korean_copulas import GOING_COPULAS, NEGATED_COPULAS, STATEMENT_COPULAS
from .korean_particles import final_sound
from .korean_templates import template

# "A -> B", "A => B", "A <- B", "A <-> B" as the arrows they draw; only between spaces ("ptr->next" is code).
_ASCII_ARROW = re.compile(r"(?<= )(?:<->|->|=>|<-)(?= )")
# ... but a pointer's member, spaced, "p -> next", "node -> left", "cur_node -> data" (it was p에서 next): code, read
# as "p->next" is (p next), not a step from p to next. A pointer is one small letter, a usual pointer's name or an
# identifier with "_"; its member an identifier of two or more small letters. "input -> output", "A -> B", "p -> q",
# "x -> y", "n -> inf" stay arrows, and so does one whose right side goes on in English words: a state's
# transition, "state s -> state t" (it was s->state t), is a step. Nor is Haskell's "x -> xs" (a list's head and its
# tail, the letter and its plural) nor a lambda's "\x -> go": arrows, x에서 xs (it was read as the code x->xs).
_CODE_ARROW = re.compile(
    r"(?<![\w.\\])([a-z]|(?:ptr|node|head|tail|cur|curr|prev|root|this|self|obj|[a-z]\w{0,30}_\w{0,30}))"
    r" -> (?!inf)(?!\1s(?![\w(]))(?=[a-z_][a-z\d_]{1,30}(?![\w(]| [A-Za-z]))"
)
_AS_ARROWS = {"<->": "↔", "->": "→", "=>": "⇒", "<-": "←"}
# A lambda's backslash before its parameters, "\x -> go", "\x y -> x": not said (espeak said English "backslash"),
# x에서 go, as a lecturer reads the arrow; a path's "C:\Users", a backslash before no arrow, left.
_LAMBDA = re.compile(r"(?<![\w\\])\\(?=[a-z_]\w{0,30}(?: [a-z_]\w{0,30}){0,4} -> )")
# "™" and "®" are not said (a lecturer does not read them), "Copyright ©" once, "©" alone 저작권.
_MARKS = re.compile(r"[™®]|(?<=[Cc]opyright) ?©")
# A single term after a sign ("0", "무한대", "b", "마이너스 1", "영역"), which a particle may follow.
_TERM = r"(?:마이너스 )?(?:\d+(?:\.\d+| 점 [영일이삼사오육칠팔구]{1,15})?|[A-Za-z](?![A-Za-z])|[가-힣]{1,8})(?=[\s.,;:!?)\]]|$)"
# The spaces around a sign all taken: "금리↑ → 투자↓" (금리 증가 and a space) was 금리 증가 에서, the particle a word.
ARROW = re.compile(rf" {{0,4}}([→⟶➔➜➡⇒⟹←⟵↔⟷⇔]) {{0,4}}({_TERM})?")
_TO, _IMPLIES, _FROM = "→⟶➔➜➡", "⇒⟹", "←⟵"
# "x → 0", "n → ∞": a small letter going to a number, a letter or infinity is a limit's variable.
_VARIABLE = re.compile(r"(?<![A-Za-z])[a-z]$")
_LIMIT = re.compile(r"(?:마이너스 )?(?:\d+(?:\.\d+)?|[A-Za-z]|무한대)")
# ... and "x → 0일 때", "n → ∞이면", "h → 0인 극한", "x → 0.5": the limit with its copula as going there, x가
# 0으로 갈 때, n이 무한대로 가면, h가 0으로 가는 (it was x에서 0일 때; a decimal x가 0으로 점 오); "lim_{x→0}", and a
# function's "f(x) → 1일 때".
LIMIT = re.compile(
    r"(?<![A-Za-z])([a-z]|[A-Za-z]\([a-z]\)) ?[→⟶➔➜➡] ?((?:마이너스 )?(?:\d+(?: 점 [영일이삼사오육칠팔구]+?)?|[A-Za-z](?![A-Za-z])|무한대))"
    rf"(?: ?({'|'.join(GOING_COPULAS)})(?![가-힣])"
    r"|(?:으로|로)(?![가-힣])|(?=[\s,;:!?)\]}]|\.(?!\d)|$))"
    r"(?! ?[→⟶➔➜➡⇒⟹])"  # "x → y → z": a flow's step, `arrow`'s
)
# "p → q", "¬q → ¬p": between propositions (p, q, r, s, negated or not) an arrow is a conditional, p면 q (it was
# p에서 q: from p).
_PROPOSITION_BEFORE = re.compile(r"(?<![A-Za-z])[¬~]?[pqrs]$")
_PROPOSITION_AFTER = re.compile(r" ?[¬~]?[pqrs](?![A-Za-z])")
# A flow of steps, "수집 → 전처리 → 학습 → 배포": an arrow with another one a step of one or two words before or
# after it (no clause mark between) is a pause, each step said in turn (it was 수집에서 전처리에서 학습에서 배포).
_STEP = r"[^\s,.;:!?→⟶➔➜➡⇒⟹]+"
_NEXT_STEP = re.compile(rf" ?(?:{_STEP} )?{_STEP} ?[→⟶➔➜➡⇒⟹]")
_PREVIOUS_STEP = re.compile(rf"[^\s,.;:!?→⟶➔➜➡⇒⟹] ?[→⟶➔➜➡⇒⟹] ?{_STEP}(?: {_STEP})? ?$")  # not a bullet
_STEP_REACH = 40
NOT_EQUAL = re.compile(rf" ?≠ ?({_TERM})?")
# ... and with a copula after its term, "x ≠ 0일 때", "a ≠ b이면" (x 낫 이퀄 0일 때): x가 0이 아닐 때, a가 b가 아니면.
NOT_EQUAL_CLAUSE = re.compile(
    r" ?≠ ?((?:마이너스 )?(?:\d+(?: 점 [영일이삼사오육칠팔구]+?)?|[A-Za-z](?![A-Za-z])|무한대))"
    rf" ?({'|'.join(NEGATED_COPULAS)})(?![가-힣])"
)  # ... and a statement's, "a ≠ 0입니다" (it was a 낫 이퀄 0입니다): a는 0이 아닙니다, the topic's particle
# ... with a subject noun before its left term, "값이 0 ≠ 1입니다", "값이 x ≠ 0이면" (k9: 값이 0은 1이 아닙니다, a subject and a
# topic in a row): the noun names the term, as before a chain (`korean_chains`), 값 0이 1이 아닙니다, 값 x가 0이 아니면.
SUBJECT_NOT_EQUAL = re.compile(
    SUBJECT_NOUN
    + r"((?:마이너스 )?(?:\d+(?: 점 [영일이삼사오육칠팔구]+?)?|[A-Za-z](?![A-Za-z])))"
    + NOT_EQUAL_CLAUSE.pattern
)
_LOOK_BACK = 24


def limit(match: re.Match[str]) -> str:
    """ "x → 0일 때" as x가 영으로 갈 때."""
    variable, value, copula = match.groups()
    sign = match.start() + len(variable) + match.group().startswith(" ", len(variable))
    if variable in "pqrs" and value in tuple("pqrs") or not copula and _in_a_flow(match.string, sign):
        return match.group()  # "p → q", a conditional, and a step of a flow, "x → y → z": `arrow`'s
    # (a copula ends the limit's clause: "x → 0이면 f(x) → 1" is no flow)
    to = "으로" if final_sound(value) == "ㄴ" else "로"
    subject = "이" if final_sound(variable.rstrip(")")) else "가"  # "f(n)" 에프 엔이
    return f"{variable}{subject} {value}{to}{' ' + GOING_COPULAS[copula] if copula else ''}"


def ascii_arrows(text: str) -> str:
    """`text` with its spaced ASCII arrows drawn as the arrow signs, before any "<" or ">" is read as a
    bound; "™" and "®" taken out, "©" after "Copyright" too."""
    text = _LAMBDA.sub(
        "", _CODE_ARROW.sub(template(r"\1->"), text)
    )  # the code arrow's test sees the lambda's backslash
    text = _ASCII_ARROW.sub(lambda m: _AS_ARROWS[m.group()], text)
    return _MARKS.sub("", text).replace("©", " 저작권 ")


def arrow(match: re.Match[str]) -> str:
    """An arrow between two terms as a lecturer links them; one that opens a line (a bullet) or ends it as
    a space."""
    sign, term = match.group(1), match.group(2) or ""
    before, after = _before(match.string, match.start()), match.string[match.end() : match.end() + 1]
    if not before[-1:].isalnum() or not (term or after.strip()):  # a bullet, or nothing after it: "전류→"
        return (" " if match.start() else "") + term
    if sign in _TO + _IMPLIES and _in_a_flow(match.string, match.start(1)):
        return f", {term}"
    final = final_sound(before)
    if (
        sign in _TO
        and _PROPOSITION_BEFORE.search(before)
        and _PROPOSITION_AFTER.match(match.string, match.start(1) + 1)
    ):
        sign = _IMPLIES[0]
    if sign in _TO and _LIMIT.fullmatch(term) and _VARIABLE.search(before):  # x가 영으로
        return f"{'이' if final else '가'} {term}{'으로' if final_sound(term) == 'ㄴ' else '로'}"
    if sign in _TO:
        word = "에서"
    elif sign in _IMPLIES:
        word = "이면" if final else "면"
    elif sign in _FROM:
        return _assignment(match.string, match.start(2) if term else match.end(), final, term)
    else:
        word = "과" if final else "와"  # ↔, ⇔
        if sign in "⇔⟺" and _PROPOSITION_BEFORE.search(before) and term in tuple("pqrs"):
            return f"{word} {term}는 동치"  # "p ⇔ q" (it was p와 q, the equivalence unsaid)
    return f"{word} {term}"


# An assignment's value with its particle, "x ← 3을 대입한다", "x ← x + 1로 갱신한다" (read59k: x는 3을 대입한다, x는 x 더하기 1로: the
# topic's particle beside the verb's object): x에 3을 대입한다, x를 x 더하기 1로 갱신한다, as a lecturer says them.
# The particle glued to a number, a letter or a bracket, or to the one Korean word after the arrow ("평균값으로"), not a
# clause's ending after it, "A ← B 이므로" (as before: A는 B 이므로), nor another term's after a Korean word, "x ← 0이고 y를
# 출력" (rvk60: x에 0이고, the object's 에 for y's particle): the value has no Hangul but that one word or an operator's.
_VALUE_WITH_PARTICLE = re.compile(
    r"(?:(?:마이너스 )?[^\s.,;:!?](?:[^.,;:!?\n가-힣]|더하기|빼기|곱하기|나누기|마이너스){0,30}?(?<=[\dA-Za-z)\]])"
    r"|[가-힣]{1,6}?(?<!므)(?=[을를로]|으로))(을|를|으로|로)(?=[\s.,;:!?)]|$)"
)


def _assignment(text: str, value: int, final: str | None, term: str) -> str:
    """ "←" as "=" is said, x는 b (an assignment, or what the left comes from); before a value with an object's particle
    에 (x에 3을), with (으)로's 을/를 (x를 … 1로). `value`: where the value begins in `text`; `term`: the part of it the
    arrow's match took, said after the particle."""
    valued = _VALUE_WITH_PARTICLE.match(text, value)
    if valued and valued.group(1) in ("을", "를"):
        word = "에"
    elif valued:
        word = "을" if final else "를"
    else:
        word = "은" if final else "는"
    return f"{word} {term}"


def not_equal(match: re.Match[str]) -> str:
    """ "x ≠ 0" as x는 영이 아님 where a single term follows; "낫 이퀄" before a longer one."""
    term = match.group(1)
    if not term:
        return " 낫 이퀄 "
    before = _before(match.string, match.start())
    topic = ("은 " if final_sound(before) else "는 ") if before[-1:].isalnum() else " "
    return f"{topic}{term}{'이' if final_sound(term) else '가'} 아님"


def subject_not_equal(match: re.Match[str]) -> str:
    """ "값이 0 ≠ 1입니다" as 값 0이 1이 아닙니다; a pronoun's, an adverb's or a noun's own 이/가 left to `not_equal_clause`."""
    noun, left, term, copula = match.groups()
    if not subject_before(noun):
        return match.group()
    subject = "이" if final_sound(left) else "가"
    return (
        f"{noun[:-2]} {left}{subject} {term}{'이' if final_sound(term) else '가'} {NEGATED_COPULAS[copula]}"
    )


def not_equal_clause(match: re.Match[str]) -> str:
    """ "x ≠ 0일 때" as x가 영이 아닐 때."""
    term, copula = match.groups()
    before = _before(match.string, match.start())
    if not before[-1:].isalnum():
        return match.group()
    if copula in STATEMENT_COPULAS:
        subject = "은" if final_sound(before) else "는"
    else:
        subject = "이" if final_sound(before) else "가"
    return f"{subject} {term}{'이' if final_sound(term) else '가'} {NEGATED_COPULAS[copula]}"


def _in_a_flow(text: str, sign: int) -> bool:
    """Whether the arrow at `sign` is one step of a flow: another arrow a step before or after it."""
    after = text[sign + 1 : sign + 1 + _STEP_REACH]
    return bool(_NEXT_STEP.match(after) or _PREVIOUS_STEP.search(text, max(0, sign - _STEP_REACH), sign))


def _before(text: str, start: int) -> str:
    """What a sign follows on its line, a bounded look back."""
    return text[max(0, start - _LOOK_BACK) : start].rpartition("\n")[2].rstrip(" )]")
