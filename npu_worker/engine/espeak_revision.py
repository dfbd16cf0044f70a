"""The espeak engine's audio revision: the number the synthesis cache keys espeak's audio on (`espeak.py`'s
`EngineInfo.audio_settings`), and why each value was raised (a module of its own: the notes outgrew `espeak.py`)."""

# Raised whenever a change here makes other audio from the same text, so a cache entry made before it is a
# miss after an upgrade (1: Korean numbers and symbols as words, long clauses read whole: `espeak_text`;
# 2: Korean lecture readings, `korean_marks`: list items, ranges, ratios, powers, formulas, units, "ㆍ";
# 3: years' ranges, "3A반", "No. 1", "I.", "1e-4", "2ⁿ", "㎖", AM/PM, versions, Greek letters, weekday ranges;
# 4: their regressions mended: sections "3.1절", "1500-3000원", "f(x+2h)", "10 pM", "길이 ℓ", "플랜/A" …;
# 5: "Summary. I. Introduction" is a list mark, not the pronoun; "레벨 3 달성" is 삼, not 세 달성;
# arrows, "≠", "©", "™", "®", "Lv. 3": `korean_arrows`, `korean_marks`; "2nd-order": second-order;
# English powers and "≠": "E = mc²" is m c squared, `english_reading`;
# "9am-6pm", "1-3pm", "3 p.m.": 오전 9시에서 오후 6시; "NCM811": 팔일일; "5년/10만km";
# "3.7±0.1V", "▲3.5%", "△5억"; "1) 안전성" and "(1)" opening a line, "IP67";
# Hanja: "전년比" 전년비, a gloss "매출(賣出)" and unknown Hanja unsaid;
# 6: their lookalikes mended: a news list's bullet "▲3대 전략" is no 증가; English "5 km²" square
# kilometers (k m squared), a footnote's "Li²", "it²" not spelled; a flow "A → B → C" is A, B, C;
# "등급은 Lv. 3. 다음" cut after "3." and no 세 번째; "IP68." and "NCM811," 육팔, 팔일일;
# Hanja "不正" 부정, "十月" 시월, "金大中" 김대중; English "⇒ Faster" a bullet, not "implies", "(GPT-4)¹" no power;
# "x → 0일 때" x가 0으로 갈 때, "x → 0.5" x가 0 점 오로; "x ≠ 0일 때" x가 0이 아닐 때;
# English "A^T" A transpose; "11-12pm", "12-2pm", "9-6pm" each hour in its half of the day;
# "3 명한테", "3 살짜리", "3 시경" 세 (삼); English "O²⁻" no power; "p → q" p면 q; "(2) 식을" no list mark; "금리↑ → 투자↓" 증가에서;
# 7: Korean "A^T" A의 전치, "Aᵀ", "(AB)^T" too, "f(x)^2" f(x)의 2제곱; "매출▲3%" 매출 증가 3 퍼센트;
# "Step 1. 준비", "Q1. 무엇인가요?" one sentence, the label's number with a pause; "3.2명/10만 명" 10만 명당 3.2명; "§ 3" 3절, "№ 5" 넘버 파이브; kana left out; "p -> next" code, not p에서 next; "dV/dt" 디브이 디티; "4K@60Hz" no "at sign";
# 8: Korean "e^T" e의 T제곱 again (Euler's number, no transpose); "state s -> state t" s에서 state t (a step, no code);
# "§ 1030" 1030절 (not 103절0); "kp@60fps.net" an e-mail, its "@" kept;
# 9: chained labels "Lesson 5. Unit 3. 문법" one sentence, each label's number with a pause (Unit 3, 문법);
# "§3.2절" 3.2절 once (not 3.2절절);
# 10: "§3.2와" 3.2절과, "§3으로" 3절로 (a particle after 절 as 절 takes it); "(1)^T", "(1+r)^T" and "x^T 에서 T는 온도"
# powers, no transpose; an unspaced "a+b", "N+1" 플러스 (espeak said English "plus"); kana inside a word,
# "한국어すし를", left out with no gap (한국어를); Haskell's "x -> xs" an arrow, x에서 xs (not the code x->xs);
# a power's particle as 제곱 takes it, "x^2를" x의 2제곱을 (not 제곱를); "$100만" 100만 달러 (not 100 달러만),
# "$3억 달러" once, "$100을" 100 달러를 (not 달러을); "HTTP/2" HTTP 2 (espeak said "slash");
# "3 × 10^8 m/s" 10의 8제곱 미터 퍼 초 (not 10^초속 8미터); "x > 0일 때" x 0 초과일 때 (not x 0일 초과 때);
# 11: "$3억 달러로", "$100 달러까지" the word once (not 달러 달러로); "$100조차" 100 달러조차 (not 100조 달러차);
# "x > 0일때", "x > 0인지" x 0 초과일때, x 0 초과인지 (not 0일 초과때, 0인 초과지);
# a lambda's "\x -> go" x에서 go (espeak said "backslash"); a braced exponent, "x^{2}", "10^{-3}", x의 2제곱,
# 10의 마이너스 3제곱 (espeak: 엑스 이, 십 마이너스 삼));
# 12: "x > 3인치", "t > 3개월" x 3인치 초과 (not 3인 초과치), "x>0이면" x 0 초과이면 (not x0);
# "2ab+b^2" 2ab 플러스 (not English "plus"); "$100+" 100 달러 이상, "$100-200" 100에서 200 달러; "10⁸ m/s", "10⁻³ m" in
# Korean (not English m/s, m); "sin²x" 사인 제곱 x, "∂f/∂x" x에 대한 f의 편미분, "x^{n+1}" x의 n 플러스 1제곱, "FY2024"
# 2024 회계연도, "p < .05" p 0 점 영오 미만; "n>=3", "x != 0" as ≥, ≠; "x^2-1" x의 2제곱 마이너스 1 (the minus dropped);
# "x ≥ y이면" x y 이상이면, "σ²" 시그마의 2제곱, "d²y/dx²" d 제곱 y d-x 제곱; "mol⁻¹" 퍼 몰;
# "sin 30°" 사인 30 도 (English "sin"), "(x+1)²" (x 플러스 1)의 2제곱, "$100-200입니다" 100에서 200 달러입니다;
# "$1M-$2M" 100만에서 200만 달러, "100$" 100 달러; "n ≥ 100만 명" n 100만 명 이상, "y ≥ 2x + 1" y 2x 더하기 1 이상;
# "YoY" 전년 대비, "CAGR" spelled; "∫_0^1 x dx" 적분 0부터 1까지 (not 0의 1제곱); "log₂8" 로그 2의 8; "3! = 6" 3 팩토리얼은 6; "cos²θ - sin²θ" 빼기 (dropped), "arcsin" 아크사인, "∇" 델.
# 13: "x > holds here", "vector<int> v;" left (it was x holds here. 초과); "y > 0.5x + 3" y 0 점 오x 더하기 3 초과
# (not 0 초과.5x); "MoM 대비" 전월 대비 once; "log₂N" 로그 2의 N (not 로그₂N); "n! / k!", "5!은" 팩토리얼 (unsaid);
# "$1M-$2M이", "100$은", "$2M이" 달러가, 달러는 (not 달러이, 달러은); "x >= 0 and" x 0 이상 and (not 0 and 이상);
# "y > x + 1", "y > x^2" y x 더하기 1 초과, y x의 2제곱 초과 (not y x 초과 플러스 1, y x 초과^2); "$1+$2" 1 달러+2 달러 again (not 1 달러 이상2 달러);
# "5 s⁻¹이" 5 퍼 초가 (not 퍼 초이); "my MoM" left (not my 전월 대비).
# 14: the Korean reading's leftovers (k6): chains "a ≤ b ≤ c" a 이상 b c 이하; "2x - 3 > 0" 2x 빼기 3 0 초과; "3인치 < x"
# 3인치 초과 x; "x ≤ 3이 되면" 이하가 (not 이하이); "if (a>b)" a가 b보다 크다; "x^{n/2}" x의 2분의 n제곱; "(n-1)!" and
# "n!/(k!(n-k)!)" 팩토리얼, 나누기; "FY2024년", "FY2024-25" 회계연도; a shell's "$1-$2" 달러 1 빼기 달러 2; "a * 2" 곱하기;
# "∇·E" 델 닷 E, "∇×B" 델 크로스 B; "ln₂" 엘엔 2; "MoM의 조언" left (not 전월 대비의).
# 15: the review of k6: a Markdown italic letter, "*n* 3개", is no product (k6: n 곱하기 세 개); a chain whose last term
# no bound reads, "a < b < f(x)", left whole (k6: a 초과 b < f(x)); a price near a word of code, "셸 호스팅 비용은 $5-$9",
# money (k6: 달러 5 빼기 달러 9); "x > y; y > z", "x>y||y>z" a formula's throughout (k6: y가 z보다 크다 after the ";");
# "2x - 3 > 0" 2x 빼기 3이 0 초과 (k6: 3 0 초과, two numbers in a row); "x < 2π" x 2파이 미만 (not 2 미만파이);
# "k!(n-k)!" k 팩토리얼 곱하기 (n-k) 팩토리얼; "MoM은" 전월 대비는 (not 대비은); "if (x > 0)" x가 0보다 크다 (not x 0 초과).
# 16: the Korean reading's leftovers (k7): a chain of bounds with its middle term first, "a ≤ b ≤ c", "1 ≤ x ≤ 3", "a < 1 < b",
# "v1 < v2 < v3", "0 < θ < π" b는 a 이상 c 이하, x는 1 이상 3 이하, "…이면" x가, "20℃ ≤ t ≤ 40℃" t는 20 도 이상, "0 < x - 1 < 3" x 빼기 1은 (not a 이상 b c 이하, a 1 미만 초과 b, the signs unsaid);
# "a - 3 > b" a 빼기 3이 b 초과, in code "if (a - 3 > b)" a 빼기 3이 b보다 크다 (not 3 미만 b); "x ‹ 2πr", "x < 2πr" x 2파이r 미만 (not 2 미만파이r); "n!이다", "3!이면"
# n 팩토리얼이다 (the sign unsaid); "(n-k)" (n 빼기 k) (the hyphen unsaid); "ρ/ε₀" 엡실론 제로분의 로 (not 로/엡실론₀);
# "if x > 10 and y < 5:" x가 10보다 크다 and y가 5보다 작다 (not x 10 초과 and y 5 미만); "π/2", "0 < θ < π/2" 2분의 파이,
# 세타는 0 초과 2분의 파이 미만 (not 파이/2, the signs unsaid).
# ... and its review (still 16, not released between): "-1 ≤ sin x ≤ 1" sin x는 마이너스 1 이상 1 이하, "-π/2 < θ < π/2",
# "1 ≤ γ < ∞", "… < 1.96일 확률", "0 < x < 1이므로", "-1 < x ≤ 1에서" read as chains; "각도는 0 ≤ θ ≤ 2π" 각도는 세타가; "속도 v는 0 ≤ v ≤ c" v said once;
# "x < 2πr²" x 2파이r의 2제곱 미만 (not 2 미만파이r의 2제곱); "1 ≤ n ≤ 2×10⁵" n은 1 이상 2 곱하기 10의 5제곱 이하 (k7: 2 이하×10의
# 5제곱); "n ≤ 10⁵" n 10의 5제곱 이하 (not 10 이하⁵); "a < b < f(x)", "0 <= i < len(arr)" b는 a 초과 f(x) 미만 (the signs unsaid);
# "n - 1 < k < n" k는 n 빼기 1 초과 n 미만 (k7: n 빼기 k는 1 초과 n 미만); "V/Ω" no quotient (k7: 오메가분의 V).
# 17: the chains' leftovers (k8): a counter or a unit after a chain's last side, "10 < n < 20명", "0 ≤ t ≤ 10 초" n은 10 초과
# 스무 명 미만, t는 0 이상 10 초 이하 (not 10 초과 n 스무 명 미만, 10 이하 초); "t ≤ 10 초" t 10 초 이하; a long first side,
# "a + b + c + d + e < x < 1" x는 a 더하기 … e 초과 1 미만 (not e x 미만 1 미만); "f(1, 2) < x < 3" x는 f(1, 2) 초과 3 미만;
# absolute values, "|x - a| < δ", "0 < |x - a| < δ" x 빼기 a의 절댓값이 델타 미만, … 절댓값은 0 초과 델타 미만 (the bars
# unsaid); "0 < 1/n < ε", "0 < e^(-x) < 1" n분의 1은 0 초과 엡실론 미만, e의 마이너스 x제곱은 0 초과 1 미만 (the signs unsaid).
# Code: "for (int i = 0; i < n; i++)", "int x = 5;" for (int i에 0을 대입; …, int x에 5를 대입 (not int i는 0); "if (0 <= x && x
# < n)" if (x가 0보다 크거나 같다 && … (not 0 이상 x, two voices); "while (lo <= hi)", "i < v.size()", "i < n - 1" in code lo가
# hi보다 작거나 같다, i가 v.size()보다 작다, i가 n 빼기 1보다 작다 (not lo ≤ hi, i v 미만.size(), i n 빼기 1 미만); "10명 < n < 20명"
# n은 열 명 초과 스무 명 미만; "|a| + |b|" 더하기 (not 플러스). Its review (rvk8, same revision: unreleased): "O(|V| + |E|)"
# and "|A|" bars unsaid as at 16; "|a + b| ≤ |a| + |b|가" … 절댓값 이하가; a chain before "입니다"; "x < 3분의 1" 3분의 1
# 미만; "if (score >= 90)" score가 90보다 크거나 같다; "float pi = 3.14;", "int j = i + 1;" …을 대입; "x < |y|", "2x < |x - a|"
# y의 절댓값 미만 (not y 미만의 절댓값); "-|x| ≤ x ≤ |x|" x는 마이너스 x의 절댓값 이상 …; "|y|/2" and "Map<String, Integer>" left.
# 18: the single bounds' leftovers (k9): a statement's copula after one, "x ≤ 1입니다", "x ≥ y입니다" x는 1 이하입니다 (not
# x 1 이하입니다); a letter's fraction, "x/2 ≤ y", "x^2 < y/2", "n/2" 2분의 x가 y 이하, x의 2제곱이 2분의 y 미만 (not x/2 이상
# y, x의 2제곱 초과 y/2, "slash"); a Greek letter's multiple, "x - 1 ≤ kσ", "x ≤ 2σ" … k시그마 이하 (not k 이하시그마);
# "|f(x)| ≤ M" … 절댓값이 M 이하 (the sign unsaid); "-1 < |x| < 1은" x의 절댓값이 … (not 절댓값은, the topic twice); "가격이
# 1000원 < p < 5000원" 가격 p가 … (not 가격이 p는); "len(s)는 |s|" s의 길이 (not s의 절댓값); an English sentence's "=",
# "Use let x = 3; here.", left to espeak's "equals" (not let x에 3을 대입); "2x ≤ 1" 2x가 1 이하 (not 2 곱하기 1 이하, the x
# lost); "x^2 < 4입니다" x의 2제곱은 4 미만입니다; "P(A) ≤ 1입니다" P(A)는 …; "x + 1 ≤ 2y" x 더하기 1이 2y 이하; "a ≠ 0입니다"
# a는 0이 아닙니다 (not a 낫 이퀄 0입니다).
# Their near misses read as at 17 (the review, rvk9): "다음과 같이 0 ≤ x ≤ 1", "|x| ≤ 1인 구간의 길이", "a = 3, b = 2a",
# "1.5m < 2" (not 다음과 같 x가, x의 길이, espeak's "a equals 3", 미터이).
# ... and the review's leftovers (korean10): "우리가 0 < x < 1" 우리가 x는 … (not 우리 x가); "x ≤ 1 입니다", "x ≥ 0, y ≥
# 0입니다" x는 …; "x < yᵢ", "x ≤ 2σᵢ", "x ≤ M₁", "|x| ≤ Mᵢ" x yᵢ 미만, x 2시그마ᵢ 이하, x M원 이하, x의 절댓값이 Mᵢ 이하 (not
# 미만ᵢ, 이하ᵢ, or the sign unsaid); "x/2²" 2의 2제곱분의 x (not 2분의 x의 2제곱); "E = mc^2 is the equation." its "="
# left to espeak's "equals" (not E는); "값이 0 ≠ 1입니다" 값 0이 1이 아닙니다 (not 값이 0은).
# 19: stop 54's leftovers (korean11): "x + 1 ≤ 2x", "x + 1 ≤ 2yᵢ" x 더하기 1이 2x 이하 (not the sign unsaid); "값이 x ≤ 1입니다"
# 값 x가 1 이하입니다 (not 값이 x는, a subject then a topic); "E = mc^2 is the equation." E = m c squared … (not mc의 2제곱,
# Korean in an English sentence); "0 <= x && x < n", "x>y||y>z" with no keyword … 그리고 …, … 또는 … (not the join unsaid);
# "x ≥ 2(x - 1)" x 2(x 빼기 1) 이상 (not x 2 이상(x 빼기 1), the bound's word inside the product); Python's "x**2", "2**10"
# x의 2제곱, 2의 10제곱 (not x 2, 2 10: the power unsaid).
# 20: stop 55's leftovers (korean12): set and logic signs, "x ∈ A이면" x가 A의 원소이면, "A ∪ B" A 합집합 B, "A ⊂ B" A는
# B의 부분집합, "∀x" 모든 x에 대해, "¬p" 낫 p, "p ⇔ q" p와 q는 동치, "ℝ" 실수 집합, "∅" 공집합 (not unsaid); "전력은 P = VI입니다"
# 전력은 P가 VI입니다 (not P는, two topics); "x ≥ 2(x - 1) + 3" x 2(x 빼기 1) 더하기 3 이상 (not 2 이상(x 빼기 1) …);
# an English sentence's units and "+", "This is 3 + 4 cm." This is 3 plus 4 centimeters. (not 더하기, 센티미터); its review
# (rvk12): "ℝ로" 실수 집합으로 (not 집합로), "∀ 기호는" as written (not 모든 기호는에 대해), "1 km/h" 1 kilometer per hour,
# "Part 1 - Introduction" as written (not 1 minus Introduction), "In 2024 - 2025" 2024 to 2025, "해는 x = 2 또는 x = 3"
# x가 2 또는 x가 3 (not x는 3).
# 21: stop 56's leftovers (korean14): a chain of sets in a clause, "A ⊂ B ⊂ C이면" A가 B의 부분집합이고 B가 C의 부분집합이면
# (not A는, a topic opening a clause); "|A| = 3" |A|는 3 (not |A| 는, the particle a word apart);
# "P = VI = I²R" P는 VI이고 I의 2제곱R (not VI는, a second topic); English text's set signs, "x ∈ ℝⁿ" x in R n (not x);
# an English sentence's decimal, "The battery is 3.7V." 3 point 7 volts (not 3 점 칠 volts);
# a closed sentence of one small English word and a longer one, "x^2 is positive." x squared is positive. (not x의 2제곱);
# a formula's line under a code line, "if ok:\n0 <= x && x < n" … 그리고 x n 미만 (not && x가 n보다 작다).
# and its review (rvk14, same revision): "x ≠ 0이므로" x가 0이 아니므로 (not 낫 이퀄), "x ∈ A이지만", "x ∈ A라고" said;
# "x ≠ 0.5" x는 0 점 오가 아님; "if (x > 0 &&\ny > 0)" y가 0보다 크다; "p < 0.05", "0.5/1.0" in an English sentence whole;
# "E = mc² = 9 × 10¹⁶ J" E는 mc의 2제곱이고 9 …; "||v|| = 1" ||v||는 1; an English sentence's "$3.50", "§14.2" whole
# (not 3 달러 point 5 0); English text's "∀x∃y", "⊃", "∅" for all x there exists y, superset of, the empty set.
# and the review's leftovers (korean15, same revision): "A ⊂ B가 성립하면" A가 B의 부분집합임이 성립하면, "x ∈ A를" x가 A의
# 원소임을 (not the sign unsaid); "∀x ∈ A이면" 모든 x가 A의 원소이면 (not A의 모든 x에 대해 이면); "if (x > 0 &&\n    y > 0)"
# y가 0보다 크다 (not y 0 초과, an indented line's); lang=en "ℝ^n_+", "ℤ⁺" R n plus, Z plus (not R to the power of n_+, Z);
# an English sentence's "1.5e-3" 1 점 오 곱하기 10의 마이너스 3제곱 (not 1 point 5 곱하기 …); "x ∈ ℤ⁺이면" x가 양의 정수
# 집합의 원소이면 (not x는 정수 집합의 원소⁺이면).
# 22: stop 57's leftovers (korean16): an ion's charge, "Ca²⁺ 이온", "Na⁺" Ca 투 플러스 이온, Na 플러스 (not Ca의 2제곱⁺, the
# charge unsaid); in an English sentence and lang=en, "O²⁻" O two minus (not O two, the sign unsaid); a number set's
# dimension, "x ∈ ℝⁿ", "ℝ^{nm}", "ℝⁿ₊" x는 n차원 실수 공간의 원소, nm차원 실수 공간, n차원 양의 실수 공간 (not as written, espeak
# spelling the sign's code point, nor 실수 집합의 나노미터제곱); lang=en "ℝ^{nm}" R n m (not R^{nm}).
# "It weighs 2.5 kg." It weighs two point five kilograms (not 2 점 오 킬로그램, a Korean text's); "for x in xs: total = 0."
# total는 0. (not English, "=" espeak's "equals"); an English sentence's numbers in its English forms, "The battery is 3.7V."
# three point seven volts (not 3 point 7, which the Korean voice said 삼 point 칠). Its review (rvk16): "-5 degrees" minus five
# degrees, "2e⁻" 2 e 마이너스, "total = 0" total은 0, "1.8e+03" 1 점 팔 곱하기 10의 3제곱, "B⁻ⁿ" a power as before.
# Its leftovers (korean17): a formula's bracket raised by any digit, "(1-a)¹", "(1-a)⁴" (1 빼기 a)의 1제곱, 의 4제곱 (not
# the superscript to espeak: only ²³ were read); an English sentence's "The year 2024 to 2025" twenty twenty-four to twenty
# twenty-five (not two thousand twenty-four), "007 volts", "00.5 volts", "1234567890 volts" zero zero seven volts, zero
# zero point five, one billion …, "5-10 volts" five to ten volts, "(−3) volts" (minus three) volts (not
# the digits to the Korean voice).
# 23: stop 58's leftovers (korean18): "H₂SO₄" H투S-O포 (not H₂S-O포); "C⁺", "V⁺" of math as written, an ion only beside chemistry;
# "p < 0.05 here." p 0 점 영오 미만 here (not here 미만); an English sentence's "$3.50", "3:30", "1/2", "p < 0.05" three
# dollars and fifty cents, three thirty, one half, p less than zero point zero five (not the Korean rules' words);
# "ℝ^{n+1}" R n plus 1 (lang=en), n 플러스 1차원 실수 공간 in an English sentence (not ℝ^{n plus one}).
# 24: stop 59's leftovers (korean21): an English sentence's arrows, "x→0⁻", "A → B", "p ⇒ q" x approaches 0 minus, A to B, p
# implies q (not x가 0으로, A에서 B, p면 q); "Add 1/2 cup.", "x ‹ π here." English (not 2분의 1, 파이 미만); "x < π/2", "3:2" in an
# English sentence pi over two, three to two (not 파이/2, 3 대 2); "Page 1 › 2 › 3" as written (not greater than); "C⁺" beside
# "anatomy" as written (not C 플러스); "Fe³⁺", "OH⁻" F-E 쓰리 플러스, O-H 마이너스 (not Fe, OH as words); "Σ⁻" 시그마 마이너스;
# "x < 5 in 범위" x 5 미만 in 범위 (not in 미만); "CO₀.₅", "LiNi₀.₈…" C-O 제로 포인트 파이브 (not C-O제로.₅, the counts lost).
# 25: rvk21's review of korean21: "24:30", "hydroxide와 H⁺", "%p", "▲5%.", "3~5%", "1.5x", "x → -∞", "- Add 1/2 cup." read anew.
# 26: rvk22's review of rvk21: an English sentence's "x → +∞", "N → ∞" approaches plus infinity, N approaches infinity (not
# x to +무한대); "3 ~ 5%", "5~3%" three to five, five to three percent (not 3 five percent); "HTTP/1.1" HTTP one point one and
# "3.5, not 4" three point five (not 1 point 1, 3 point 5: the digits the Korean voice's around "point"); "Fe³⁺ 이온과 Fe 원자"
# F-E 원자 (not Fe, espeak's "fee", beside the spelled ion); "T₀.₅" T 제로 포인트 파이브 (not T제로.₅, the half unsaid); "f(x) → 0"
# f(x) approaches zero (not to 0); "x < 5 in 이 구간" x 5 미만 in 이 구간 (not in 미만, inches); "1) Add 1/2 cup." English, one half
# (not 2분의 1).
# 27: read59k's reading of rvk22: an English sentence's unit rate and letter's division, "5 mg/1.5 mL", "x/1.5", keep their
# slash (not 밀리그램 one point five, x one point five); an author's name beside an ion, "(Li et al., 2020)", "Li 등(2020)",
# as written (not L-I et al.); an English sentence's flow, "a → b → c", a to b to c (not a approaches b approaches c); a
# bound after a capitalised word's number, "Let 0 ‹ x", less than (not the quote left unsaid).
# 28: stop 60's leftovers (korean60): "α⁺β⁻" 알파 플러스 베타 마이너스 (not 알파⁺베타, the first sign unsaid); "x₀.₅", "NCM₀.₈"
# x 제로 포인트 파이브, N-C-M 제로 포인트 에잇 (not x, N-C-M제로: the index or its fraction unsaid); an English sentence's "3.5, not 4",
# "3~5 dollars", "x/2" three point five, not four, three to five dollars, x over two (not 4, 3에서 5, 2분의 x: the Korean
# voice's digits and words); its "α", "Δx", "σ²", "YoY" alpha, Delta x, sigma squared, year over year (not 알파, 델타x,
# 시그마의 2제곱, 전년 대비); lang=en "σ²" σ squared (not σ², espeak's sigma two); an English sentence's "x ← x + 1", "A ↔ B"
# x gets x plus one, A and B (not x는, A와: Korean particles); "x ← 3을 대입" x에 3을 (not x는 3을); "The Fe atom" beside a
# spelled "Fe³⁺ 이온" as written (not F-E); "docker run -p 8080:80" 8080 콜론 80 (not 8080 대 80); "x<5>y" x와 y는 5 미만 (not
# x 5 미만 미만 y); "요한복음 3:16", "마태복음 10:3" 3장 16절, 10장 3절 (not 세 시 16분, 10 대 3).
# 29: stop 60's review of korean60 (rvk60): a verse's particle as 절 takes it, "미가 10:3으로", "시편 23:5를" 3절로, 5절을 (not
# 3절으로, 5절를), "아가 3:00에" a clock's 세 시에 (not 3장 00절); an English sentence's "5 μA", "10 µm" five microamperes,
# ten micrometers (not 5 mu A, 10 마이크로미터), a Greek word's "λόγος" as written (not lambda ό gamma …, letter by letter);
# "x<5>y이면" x와 y는 5 미만이면 (not x 5 미만 미만 y이면); "x₀.₃을", "T₀.₃을", "NCM₀.₉를" 쓰리를, 나인을 (not 쓰리을, 나인를);
# "x ← 0이고 y를" x는 0이고 (not x에 0이고, y's particle taken for the value's). Its follow-ups (korean61, same revision:
# unreleased): "요나 10:30에 왔다" 열 시 30분에 (not 10장 30절에), "요한복음 3:16~4:2" 3장 16절에서 4장 2절 (not 4 대 2), "3:16와"
# 16분과 (not 16분와); an English sentence's "-p 8080:80" … colon eighty (not to eighty), "$3.50, not 4" three dollars and fifty
# cents, not four (not 3 점 오영 달러, not 4), "Call 911" nine one one (not nine hundred eleven), "Call 112 or 119" one one
# two or one one nine (not one hundred nineteen), "Press ← to go back" left arrow (not gets), "Use ← and → to move",
# "Ctrl+←" left arrow and right arrow, Ctrl plus left arrow (not and to, Ctrl plus gets), "α⁺β" 알파 플러스 베타 (not
# 알파⁺베타); a subscript letter index, "αₙ", "xₙ을", "x < yᵢ" 알파 n, x n을, x y i 미만 (not 알파ₙ, xₙ을, yᵢ: espeak
# garbled the first, said nothing for the second, spelled the third's Unicode name), a particle after one in its index's
# form, "xₙ를", "aᵢ을" x n을, a i를 (not x n를, a i을); "다니엘 2:44에 대한 해석" 2장 44절에 대한 (not 두 시 44분에 대한),
# "요나 10:30에도 왔다" 열 시 30분에도 (not 10장 30절에도).
# 30: stop 61's leftovers (korean62): "요나 10:30~11:30에 왔다" 열 시 30분에서 열한 시 30분에 (not 10장 30절에서 11장 30절에);
# "3:16로 이겼다", "10:3로 이겼다" 3 대 16으로, 10 대 3으로 (not 세 시 16분으로, 10 대 3로); "xₙ₊₁", "aₙ₋₁을" x n 플러스 1, a n
# 마이너스 1을 (not x n₊₁, the sign and digit unsaid); an English sentence's "192.168.0.1" one nine two dot … (not 192 점 168 …);
# "Call 911.", "Press 1." Call nine one one, Press one (not the Korean voice's 구백십일, 일); "2026.12.07.까지" 2026년 12월
# 7일까지 (not 7일.까지, a pause before the particle); "x̄ = 3.2", "p̂ = 0.4" x 바는, p 햇은 (not x, p: the accent unsaid), in an
# English sentence and lang=en x bar, p hat. Its follow-ups (same revision: unreleased): "F = -kx", "f(-x)", "-x² + 1"
# F는 마이너스 kx, f(마이너스 x), 마이너스 x의 2제곱 (not F는 -kx, which espeak said F는 kx: the sign lost); "p = .048" p는 0 점
# 영사팔 (not .048, espeak's 영사팔); "χ² 검정" 카이제곱 검정 (not 카이의 2제곱 검정); "x -= 1", "i--" x minus equals 1, i minus
# minus (not x equals 1, i: the minus lost); "C++17" C++ 17 (not C+플러스 17); "C#으로" C 샵으로 (not C hash); "a⃗" a 벡터
# (not a, the arrow unsaid); "2π√(L/g)" 2파이루트 (not 2파이√, the root unsaid); "(x-μ)²" (x 빼기 뮤)의 2제곱 (not
# (x-뮤)², the minus and the power unsaid); "1e-4로" 4제곱으로 (not 4제곱로); its review (rvk62): "x̄²", "σ̂²" x 바의 2제곱,
# 시그마 햇의 2제곱 (not x 바, 시그마 햇: the power dropped); a usage line's "[-h]", "(-v 옵션)" as written (not 마이너스 h), a
# bullet's "-X-ray", "-C++ 언어" too (not 마이너스 X-ray); "3--5" as before korean62 (not 3 minus minus5); "점수는
# 10:30부터" 열 시 30분부터 (not 10 대 30부터); a rule's "=-=-=-", "-=-=-" as written (not 마이너스는 마이너스는, minus equals);
# "x > -∞", "x < ∞" x 마이너스 무한대 초과, x 무한대 미만 (not x 마이너스 초과 무한대: greater than infinity; x < 무한대); "<br>-둘째" as written (not 마이너스 둘째);
# "(-∞, 0)", "[-π, π]" (마이너스 무한대, 0), [마이너스 파이, 파이] (not -무한대, -파이: the sign unsaid);
# "xᵢ₁" x i₁ as before korean62 (not xᵢ₁, the index unsaid). Its leftovers (korean63, same revision: unreleased): a
# language's letter, "ü 발음", "Ä는", pinyin's "ā", "Ō사카" as before korean62 (not u 더블 닷, A 더블 닷, a 바, O 바사카); an
# English sentence's "version 1.2.3.4", "section 2.10.1", "Python 3.11" one point two point three point four, two point ten
# point one, three point eleven (not one dot two …, 2 점 10 점 1, three point one one), its "(p = .048)" zero point zero four
# eight (not .048); "Python 3.11을" 3 점 11을 (not 3 점 일일을); "-a ≤ x ≤ a", "-L/2 ≤ x ≤ L/2", "x ≤ -y ≤ z" x는 마이너스 a
# 이상 a 이하, x는 마이너스 2분의 L 이상 …, 마이너스 y는 x 이상 z 이하 (not as written, the signs unsaid; x 마이너스 y z 이하 이하); "x̄ - μ",
# "(x̄ - μ)²", "p̂(1-p̂)", "x̄₁ = 3" x 바 빼기 뮤, (x 바 빼기 뮤)의 2제곱, p 햇(1 빼기 p 햇), x 바 1은 3 (not x 바 - 뮤, the minus and
# the power unsaid; x 바₁는); "2x̄ = 4" 2 x 바는 4 (not 2배 바는 4).
AUDIO_REVISION = 30
