/**
 * What to say: the page's input (pasted text or a lecture JSON) turned into `sections` for a
 * `synth_batch` request. Pure functions, no DOM.
 */

// What a lecture JSON starts with: an object's first key, a list's first section (`{` or a string), or
// is: `{}` or `[]` (to say a lecture needs sections). Text that merely opens with a bracket ("[슬라이드 1]
// 안녕하세요.", "[] 는 빈 리스트입니다.") is text: it was taken for JSON that does not parse, and refused.
const LECTURE_JSON = /^(\{\s*"|\[\s*[{"]|\{\s*\}$|\[\s*\]$)/;

/**
 * Parse the input box. JSON (an object with `sections`, as POST /synth_batch takes, or a bare list)
 * keeps its `idx` values and `lang`; plain text is split by blank lines ("paragraphs") or by line.
 * Returns {sections: [{idx, text}], lang?, title?}; throws Error with a readable message.
 */
export function parseInput(text, splitBy = "paragraphs") {
  const trimmed = text.trim();
  if (LECTURE_JSON.test(trimmed)) return parseLecture(trimmed);
  const pieces = splitBy === "lines" ? trimmed.split(/\r?\n/) : trimmed.split(/\r?\n\s*\r?\n/);
  const sections = pieces
    .map((piece) => piece.replace(/\s*\r?\n\s*/g, " ").trim())
    .filter((piece) => piece.length > 0)
    .map((piece, idx) => ({ idx, text: piece }));
  return { sections };
}

function parseLecture(json) {
  let body;
  try {
    body = JSON.parse(json);
  } catch (error) {
    throw new Error(`the input looks like JSON but does not parse: ${error.message}`);
  }
  const raw = Array.isArray(body) ? body : body?.sections;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new Error("a lecture JSON needs a non-empty `sections` list of {idx, text}");
  }
  const sections = raw.map((item, position) => {
    if (typeof item === "string") return { idx: position, text: item };
    if (!item || typeof item.text !== "string") throw new Error(`sections[${position}] has no text`);
    return { idx: Number.isInteger(item.idx) ? item.idx : position, text: item.text };
  });
  return { sections, lang: typeof body.lang === "string" ? body.lang : undefined, title: body.title };
}

/**
 * Keep the sections whose idx is in `spec` ("" or "all" = every one; "0-4, 7" = idx 0..4 and 7).
 * Ranges are compared, never expanded, so "0-99999999999" costs no more than "0-4".
 * Throws Error for a malformed spec, a backwards range or a number past 2^53.
 */
export function selectSections(sections, spec) {
  const text = (spec || "").trim().toLowerCase();
  if (text === "" || text === "all") return sections;
  const ranges = text.split(",").map((part) => parseRange(part.trim()));
  return sections.filter((section) => ranges.some(([first, last]) => section.idx >= first && section.idx <= last));
}

function parseRange(part) {
  const match = part.match(/^(\d+)(?:\s*-\s*(\d+))?$/);
  if (!match) throw new Error(`range "${part}" is not a number or a-b`);
  const first = Number(match[1]);
  const last = match[2] === undefined ? first : Number(match[2]);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last)) throw new Error(`range "${part}" is too large`);
  if (last < first) throw new Error(`range "${part}" runs backwards (write ${last}-${first})`);
  return [first, last];
}

/** A lecture JSON laid out one section per line, so the box stays readable and editable. */
export function formatLecture(body) {
  if (!body || !Array.isArray(body.sections)) return JSON.stringify(body, null, 1);
  const { sections, ...rest } = body;
  const head = Object.entries(rest).map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)},\n`).join("");
  const lines = sections.map((section) => `  ${JSON.stringify(section)}`).join(",\n");
  return `{${head}"sections": [\n${lines}\n]}`;
}
