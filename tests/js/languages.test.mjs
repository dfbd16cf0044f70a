// client_js/languages.js: the worker's /health languages, offered and checked before Play, with `node --test`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { listedLanguages, unspokenLanguage } from "../../client_js/languages.js";

test("a /health that lists no languages leaves every language to the worker", () => {
  for (const health of [{}, { languages: null }, { languages: "ko" }, { languages: [] }, { languages: [7, "<b>"] }, null]) {
    assert.equal(listedLanguages(health), null);
    assert.equal(unspokenLanguage("zz", listedLanguages(health)), null);
  }
});

test("codes are spelled as the worker spells them", () => {
  const listed = listedLanguages({ languages: ["en-us", "ko", "chr-US-Qaaa-x-west", "<img src=x>", "x".repeat(100)] });
  assert.deepEqual(listed, ["en-us", "ko", "chr-US-Qaaa-x-west"]);
  for (const lang of ["ko", " KO ", "ko_KR", "ko-kr", "EN-US", "chr-us-qaaa-x-west"]) {
    assert.equal(unspokenLanguage(lang, listed), null, lang);
  }
  assert.match(unspokenLanguage("zz", listed), /^The worker does not speak the language "zz": its \/health lists the ones it speaks \(en-us, ko, chr-US-Qaaa-x-west\)/);
  assert.match(unspokenLanguage("en", listed), /"en"/); // `en` itself is not listed here, only `en-us`
});

test("an espeak-ng voice's name or identifier, which the worker takes, is offered and not refused", () => {
  const listed = listedLanguages({ languages: ["english (america)", "gmw/en-us", "german", "a<b", "x\ny"] });
  assert.deepEqual(listed, ["english (america)", "gmw/en-us", "german"]);
  for (const lang of ["English (America)", "gmw/en-US", "German"]) {
    assert.equal(unspokenLanguage(lang, listed), null, lang);
  }
});

test("a long list is shown in part", () => {
  const listed = Array.from({ length: 30 }, (_, i) => `l${i}`);
  assert.match(unspokenLanguage("zz", listed), /l11, … \(30 in all\)\)/);
});
