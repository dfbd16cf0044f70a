/** The input box, the split and range choices, and a loaded lecture file → `state.sections`. */

import { formatLecture, parseInput, selectSections } from "./sections.js";
import { $, playingOut, state, updateButtons } from "./state.js";
import { renderSlides, showMessage } from "./view.js";

const MAX_FILE_BYTES = 8 * 1024 * 1024; // the worker's default body bound: a larger lecture cannot be sent

function readSections() {
  const text = $("input").value;
  if (!text.trim()) return { sections: [] };
  const parsed = parseInput(text, $("split").value);
  return { ...parsed, sections: selectSections(parsed.sections, $("range").value) };
}

export function refreshInput() {
  if (state.run?.running || playingOut()) return; // the list shows the running request
  try {
    const parsed = readSections();
    if (parsed.lang) $("lang").value = parsed.lang;
    state.sections = parsed.sections.map((s) => ({ ...s, state: "idle" }));
    showMessage(parsed.sections.length || !$("input").value.trim() ? "" : "No section selected.", "warn");
  } catch (error) {
    state.sections = [];
    showMessage(error.message, "error");
  }
  renderSlides(state.sections);
  updateButtons();
}

const isJsonFile = (file) => /\.json$/i.test(file.name) || file.type === "application/json";

/** A dropped-in lecture: read as UTF-8; a file that cannot be read says why instead of failing silently. */
export async function loadFile(file) {
  if (file.size > MAX_FILE_BYTES) {
    showMessage(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB; the limit is 8 MiB.`, "error");
    return;
  }
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await file.arrayBuffer());
  } catch (error) {
    const why = error instanceof TypeError ? "it is not UTF-8 text" : error.message;
    showMessage(`Could not load ${file.name}: ${why}.`, "error");
    return;
  }
  try {
    const body = JSON.parse(text);
    if (typeof body !== "object" || body === null) throw new Error(`it holds a JSON ${body === null ? "null" : typeof body}, not a lecture`);
    $("input").value = formatLecture(body);
  } catch (error) {
    if (isJsonFile(file)) {
      // A .json that is no lecture ({'sections': …} from a Python print, a bare "string") is a broken
      // lecture, not a script: read as text, Play spoke its braces and quotes aloud. The box keeps its text.
      showMessage(`Could not load ${file.name}: it is not a lecture JSON (${error.message}).`, "error");
      return;
    }
    $("input").value = text; // a text file: treat it as pasted text
  }
  refreshInput();
}
