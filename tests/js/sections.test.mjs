// The player's input parsing (client_js/sections.js): pure functions, run with `node --test`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { formatLecture, parseInput, selectSections } from "../../client_js/sections.js";

const lecture = { title: "t", lang: "ko", sections: [0, 1, 2, 3, 4, 5, 6, 7].map((idx) => ({ idx, text: `s${idx}` })) };

test("plain text splits by paragraph or by line", () => {
  assert.deepEqual(parseInput("one\ntwo\n\nthree").sections, [
    { idx: 0, text: "one two" },
    { idx: 1, text: "three" },
  ]);
  assert.deepEqual(parseInput("one\ntwo", "lines").sections.map((s) => s.text), ["one", "two"]);
});

test("a lecture JSON keeps its idx values and lang; a bare list works too", () => {
  const parsed = parseInput(JSON.stringify({ lang: "en", sections: [{ idx: 7, text: "x" }, { text: "y" }] }));
  assert.deepEqual(parsed.sections, [{ idx: 7, text: "x" }, { idx: 1, text: "y" }]);
  assert.equal(parsed.lang, "en");
  assert.deepEqual(parseInput('["a", "b"]').sections, [{ idx: 0, text: "a" }, { idx: 1, text: "b" }]);
});

test("broken JSON and sections without text are readable errors", () => {
  assert.throws(() => parseInput('{"sections": [{"idx": 0'), /does not parse/);
  assert.throws(() => parseInput('[{"idx": 0, "text": "a"},]'), /does not parse/);
  assert.throws(() => parseInput('{"sections": []}'), /non-empty `sections`/);
  assert.throws(() => parseInput('{"sections": [{"idx": 0}]}'), /sections\[0\] has no text/);
});

test("ranges select by idx", () => {
  const pick = (spec) => selectSections(lecture.sections, spec).map((s) => s.idx);
  assert.deepEqual(pick(""), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(pick("all"), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(pick("0-2, 6"), [0, 1, 2, 6]);
  assert.deepEqual(pick(" 5 - 5 "), [5]);
});

// Expanding 2^53 numbers into a Set would never finish: the timeout turns that into a failure.
test("a huge range is compared, not expanded", { timeout: 10000 }, () => {
  assert.equal(selectSections(lecture.sections, "0-9007199254740991").length, 8);
});

test("backwards, too large and malformed ranges are refused", () => {
  assert.throws(() => selectSections(lecture.sections, "5-2"), /runs backwards \(write 2-5\)/);
  assert.throws(() => selectSections(lecture.sections, "0-99999999999999999999"), /too large/);
  assert.throws(() => selectSections(lecture.sections, "a-b"), /is not a number or a-b/);
  assert.throws(() => selectSections(lecture.sections, "1,,2"), /range "" is not a number/);
});

test("formatLecture puts one section per line and parses back", () => {
  const text = formatLecture(lecture);
  assert.equal(text.split("\n").filter((line) => line.includes('"idx"')).length, 8);
  assert.deepEqual(JSON.parse(text), lecture);
});

test("text that only opens with a bracket is text, not broken JSON", () => {
  assert.deepEqual(parseInput("[슬라이드 1] 안녕하세요.\n\n{인사} 반갑습니다.\n\n[1] 셋.").sections.map((s) => s.text), [
    "[슬라이드 1] 안녕하세요.",
    "{인사} 반갑습니다.",
    "[1] 셋.",
  ]);
});

test("text that opens with an empty bracket pair is text; the pair alone is a lecture without sections", () => {
  assert.deepEqual(parseInput("[] 는 빈 리스트입니다.\n\n{} 는 빈 객체입니다.").sections.map((s) => s.text), [
    "[] 는 빈 리스트입니다.",
    "{} 는 빈 객체입니다.",
  ]);
  assert.throws(() => parseInput(" [ ] "), /non-empty `sections`/);
  assert.throws(() => parseInput("{\n}"), /non-empty `sections`/);
});
