import { badRequest } from "../../lib/errors";

export interface ArtifactEdit {
  oldText: string;
  newText: string;
  replaceAll?: boolean;
}

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * Applies edits in order, each to the result of the previous ones, and returns
 * the new content; throws 400 naming the first edit that does not apply
 * (nothing is saved then). An edit applies when `oldText` occurs exactly once,
 * or at least once with `replaceAll`. Replacement is literal: `$` patterns in
 * `newText` mean nothing.
 */
export function applyEdits(content: string, edits: ArtifactEdit[]): string {
  let out = content;
  edits.forEach((edit, i) => {
    const path = `body.edits.${i}.oldText`;
    const n = occurrences(out, edit.oldText);
    if (n === 0) {
      const message = `edits[${i}].oldText was not found in the content${i > 0 ? " (after applying the earlier edits)" : ""}`;
      throw badRequest(`${message}; no edit was applied`, [{ path, message }]);
    }
    if (n > 1 && !edit.replaceAll) {
      const message = `edits[${i}].oldText occurs ${n} times; include more surrounding text to make it unique, or set replaceAll`;
      throw badRequest(`${message}; no edit was applied`, [{ path, message }]);
    }
    if (edit.replaceAll) {
      out = out.split(edit.oldText).join(edit.newText);
    } else {
      const at = out.indexOf(edit.oldText);
      out = out.slice(0, at) + edit.newText + out.slice(at + edit.oldText.length);
    }
  });
  return out;
}
