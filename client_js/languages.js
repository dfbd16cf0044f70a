/**
 * The languages a worker's `/health` lists (`languages`, docs/protocol.md): offered under the Language
 * field, and a language it does not list said before Play sends anything (the worker refused it with
 * `UnknownLanguage` only once the page had connected and sent the request). Spelled as the worker
 * spells it: case and `_` aside, and a region of a listed language (`ko-KR`) is spoken where `ko` is.
 * A worker that lists none (sovits, an api node whose engine nodes list none, an older one) answers for itself, as before.
 */

export const MAX_LANGUAGES_SHOWN = 500;
// Codes, and espeak-ng voice names (`english (america)`, `gmw/en-us`), which the worker takes as well: a
// name refused here was said to be a language the worker did not speak. Anything else a hostile
// `?worker=` lists is never offered.
const CODE = /^[A-Za-z0-9][A-Za-z0-9 ()\/,.-]{0,63}$/;

/** The codes of a /health body's `languages` that look like codes, or null when it lists none. */
export function listedLanguages(health) {
  if (!Array.isArray(health?.languages)) return null;
  const codes = health.languages.filter((code) => typeof code === "string" && CODE.test(code));
  return codes.length ? codes : null;
}

/** Why `lang` is not sent (the worker lists its languages, and not this one), else null. */
export function unspokenLanguage(lang, listed) {
  if (!listed) return null;
  const code = lang.trim().toLowerCase().replaceAll("_", "-");
  const spoken = new Set(listed.map((known) => known.toLowerCase()));
  if (spoken.has(code) || spoken.has(code.split("-")[0])) return null;
  const shown = listed.slice(0, 12).join(", ") + (listed.length > 12 ? `, … (${listed.length} in all)` : "");
  return `The worker does not speak the language "${lang.trim().slice(0, 64)}": its /health lists the ones it ` +
    `speaks (${shown}); pick one from the Language field's list.`;
}
