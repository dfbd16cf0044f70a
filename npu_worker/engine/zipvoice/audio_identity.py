"""What a ZipVoice engine's cache entries are keyed on besides its model: the files, every setting that
changes the audio, and `AUDIO_REVISION`, raised by a change of this package that makes other audio.

Apart from the engine because it is the one thing the synthesis cache needs of it, and the revision's
history is long: a new entry here is every audible fix's last step.
"""

from __future__ import annotations

import hashlib

from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.options import ZipVoiceOptions

# Raised whenever a change of this package makes other audio from the same files and settings, so a cache
# entry made before it is a miss after an upgrade (2: the first segment's prompt at the voice's level;
# 3: Korean numbers, units and symbols read as words, `korean_reading`; 4: an early first segment never
# ends inside a word, `segmenter.plan_segments`; emilia reads what precedes a text's first letter, and
# a Hangul text; 5: Korean lecture readings, `korean_reading`, `korean_marks` and `sentence_ends`: a list
# item's "1." is 첫 번째 and no sentence of its own; ranges, ratios, powers, formulas, units, acronyms, "ㆍ";
# 6: more of them, and "No. 1" and "Who was it? I." cut as sentences: `korean_reading`, `sentence_ends`;
# 7: their regressions mended, sections "3.1절", ranges "1500-3000원", "정답은 No. 2번" cut after "No.";
# 8: "Lv. 3", "Apple Inc. 발표", "et al. (2020)", "Jan. 2024" and "Summary. I. Introduction" not cut; "레벨 3 달성": 삼;
# arrows, "≠", "©", "™", "®", "Lv. 3" read: `korean_arrows`, `korean_marks`; "2nd-order": second-order;
# English powers and "≠": "E = mc²" is m c squared, `english_reading`;
# "9am-6pm", "1-3pm", "3 p.m.": 오전 9시에서 오후 6시; "NCM811": 팔일일; "5년/10만km";
# "3.7±0.1V", "▲3.5%", "△5억"; "1) 안전성" and "(1)" opening a line, "IP67";
# Hanja: "전년比" 전년비, a gloss "매출(賣出)" and unknown Hanja unsaid;
# 9: their lookalikes mended: a news list's bullet "▲3대 전략" is no 증가; English "5 km²" square
# kilometers (k m squared), a footnote's "Li²", "it²" not spelled; a flow "A → B → C" is A, B, C;
# "등급은 Lv. 3. 다음" cut after "3." and no 세 번째; "IP68." and "NCM811," 육팔, 팔일일;
# Hanja "不正" 부정, "十月" 시월, "金大中" 김대중; English "⇒ Faster" a bullet, not "implies", "(GPT-4)¹" no power;
# "x → 0일 때" x가 0으로 갈 때, "x → 0.5" x가 0 점 오로; "x ≠ 0일 때" x가 0이 아닐 때;
# English "A^T" A transpose; "11-12pm", "12-2pm", "9-6pm" each hour in its half of the day;
# "3 명한테", "3 살짜리", "3 시경" 세 (삼); English "O²⁻" no power; "p → q" p면 q; "(2) 식을" no list mark; "금리↑ → 투자↓" 증가에서;
# 10: a reference's silence is measured without its DC offset, `prompt.clean_reference`;
# 11: Korean "A^T" A의 전치, "Aᵀ", "(AB)^T" too, "f(x)^2" f(x)의 2제곱; "매출▲3%" 매출 증가 3 퍼센트;
# "Step 1. 준비", "Q1. 무엇인가요?" one sentence, the label's number with a pause; "3.2명/10만 명" 10만 명당 3.2명; "§ 3" 3절, "№ 5" 넘버 파이브; kana left out; "p -> next" code, not p에서 next; "dV/dt" 디브이 디티; "4K@60Hz" no "at sign": `sentence_ends`, `korean_marks`;
# 12: Korean "e^T" e의 T제곱 again (Euler's number, no transpose); "state s -> state t" s에서 state t (a step, no code);
# "§ 1030" 1030절 (not 103절0); "kp@60fps.net" an e-mail, its "@" kept;
# 13: chained labels "Lesson 5. Unit 3. 문법" one sentence, each label's number with a pause (Unit 3, 문법);
# "§3.2절" 3.2절 once (not 3.2절절);
# 14: "§3.2와" 3.2절과, "§3으로" 3절로 (a particle after 절 as 절 takes it); "(1)^T", "(1+r)^T" and "x^T 에서 T는 온도"
# powers, no transpose; an unspaced "a+b", "N+1" 플러스 (espeak said English "plus"); kana inside a word,
# "한국어すし를", left out with no gap (한국어를); Haskell's "x -> xs" an arrow, x에서 xs (not the code x->xs);
# a power's particle as 제곱 takes it, "x^2를" x의 2제곱을 (not 제곱를); "$100만" 100만 달러 (not 100 달러만),
# "$3억 달러" once, "$100을" 100 달러를 (not 달러을); "HTTP/2" HTTP 2 (espeak said "slash");
# "3 × 10^8 m/s" 10의 8제곱 미터 퍼 초 (not 10^초속 8미터); "x > 0일 때" x 0 초과일 때 (not x 0일 초과 때);
# 15: "$3억 달러로", "$100 달러까지" the word once (not 달러 달러로); "$100조차" 100 달러조차 (not 100조 달러차);
# "x > 0일때", "x > 0인지" x 0 초과일때, x 0 초과인지 (not 0일 초과때, 0인 초과지);
# a lambda's "\x -> go" x에서 go (espeak said "backslash"); a braced exponent, "x^{2}", "10^{-3}", x의 2제곱,
# 10의 마이너스 3제곱 (espeak: 엑스 이, 십 마이너스 삼));
# 16: "x > 3인치", "t > 3개월" x 3인치 초과 (not 3인 초과치), "x>0이면" x 0 초과이면 (not x0);
# "2ab+b^2" 2ab 플러스 (not English "plus"); "$100+" 100 달러 이상, "$100-200" 100에서 200 달러; "10⁸ m/s", "10⁻³ m" in
# Korean (not English m/s, m); "sin²x" 사인 제곱 x, "∂f/∂x" x에 대한 f의 편미분, "x^{n+1}" x의 n 플러스 1제곱, "FY2024"
# 2024 회계연도, "p < .05" p 0 점 영오 미만; "n>=3", "x != 0" as ≥, ≠; "x^2-1" x의 2제곱 마이너스 1 (the minus dropped);
# "x ≥ y이면" x y 이상이면, "σ²" 시그마의 2제곱, "d²y/dx²" d 제곱 y d-x 제곱; "mol⁻¹" 퍼 몰;
# "sin 30°" 사인 30 도 (English "sin"), "(x+1)²" (x 플러스 1)의 2제곱, "$100-200입니다" 100에서 200 달러입니다;
# "$1M-$2M" 100만에서 200만 달러, "100$" 100 달러; "n ≥ 100만 명" n 100만 명 이상, "y ≥ 2x + 1" y 2x 더하기 1 이상;
# "YoY" 전년 대비, "CAGR" spelled; "∫_0^1 x dx" 적분 0부터 1까지 (not 0의 1제곱); "log₂8" 로그 2의 8; "3! = 6" 3 팩토리얼은 6; "cos²θ - sin²θ" 빼기 (dropped), "arcsin" 아크사인, "∇" 델.
# 17: the Korean reading's review of round 12: English words after a sign left, "y > 0.5x" whole, "MoM 대비" once, "log₂N", "n! / k!", "100$은".
# 18: the Korean reading's leftovers (k6): bound chains, a number on a comparison's left, particles after a bound's
# word, code's comparisons, "x^{n/2}", bracket factorials, "FY2024년", "FY2024-25", a shell's "$1-$2", "a * 2", "∇·E",
# "ln₂", "MoM의" (the espeak engine's revision 14 lists them).
# 19: the review of k6: "*n* 3개" no product, "a < b < f(x)" left whole, "셸 호스팅 비용은 $5-$9" money, "x > y; y > z" a formula's, "2x - 3 > 0" 3이 0 초과, "x < 2π" 2파이 미만, "k!(n-k)!" 곱하기, "MoM은" 대비는, "if (x > 0)" x가 0보다 크다 (the espeak
# engine's revision 15 lists them).
# 20: the Korean reading's leftovers (k7): chains with the middle term first, "a ≤ b ≤ c" b는 a 이상 c 이하, "a - 3 > b"
# 3이 b 초과, "x ‹ 2πr" 2파이r 미만 and the rest the espeak engine's revision 16 lists.
# 21: the chains' leftovers (k8): a counter after a chain, "10 < n < 20명" n은 10 초과 스무 명 미만, and the rest the
# espeak engine's revision 17 lists.
# 22: the single bounds' leftovers (k9): "x ≤ 1입니다" x는 1 이하입니다, "x/2 ≤ y" 2분의 x가 y 이하, "x ≤ 2σ" 2시그마 이하
# and the rest the espeak engine's revision 18 lists.
# 23: stop 54's leftovers (korean11): "x + 1 ≤ 2x" 1이 2x 이하, "값이 x ≤ 1입니다" 값 x가, an English sentence's powers in
# English, a formula's "&&" 그리고, and the rest the espeak engine's revision 19 lists.
# 24: stop 55's leftovers (korean12): set and logic signs said, "x ∈ A" x는 A의 원소, and the rest the espeak engine's
# revision 20 lists.
# 25: stop 56's leftovers (korean14): the espeak engine's revision 21 lists them.
# 26: stop 57's leftovers (korean16): an ion's charge, "Ca²⁺" Ca 투 플러스, and the rest the espeak engine's revision 22
# lists.
# 27: stop 58's leftovers (korean18): "H₂SO₄" H투S-O포, an English sentence's money, times, fractions and bounds in English,
# and the rest the espeak engine's revision 23 lists.
# 28: stop 59's leftovers (korean21): an English sentence's arrows, π's fractions and ratios in English, "Fe³⁺" F-E 쓰리 플러스,
# and the rest the espeak engine's revision 24 lists.
# 29: stop 59's review of korean21 (rvk21): the readings the espeak engine's revision 25 lists.
# 30: stop 59's review of rvk21 (rvk22): the readings the espeak engine's revision 26 lists.
# 31: stop 59's last reading (read59k): the readings the espeak engine's revision 27 lists.
# 32: stop 60's leftovers (korean60): the readings the espeak engine's revision 28 lists.
# 33: stop 60's review of korean60 (rvk60) and its follow-ups (korean61, unreleased): the readings the espeak engine's
# revision 29 lists.
# 34: stop 61's leftovers (korean62) and their follow-ups (unreleased): the readings the espeak engine's revision 30 lists.
AUDIO_REVISION = 34


def audio_settings(
    files: model_files.ModelFiles,
    num_steps: int,
    guidance_scale: float,
    tokenizer_name: str,
    fixed_shapes: bool,
    options: ZipVoiceOptions,
) -> str:
    """The engine's `audio_settings` (`EngineInfo`): a digest of the files, the settings used and the
    revision."""
    used = (AUDIO_REVISION, num_steps, guidance_scale, tokenizer_name, fixed_shapes)
    return hashlib.sha256(repr((files.fingerprint(), used, options)).encode()).hexdigest()[:32]
