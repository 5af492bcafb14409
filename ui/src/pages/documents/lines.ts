// A Markdown text's lines as block structure sees them, without parsing it:
// which lines are ATX headings, leaving fenced code alone.

export const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Each line of `text` (its break kept), where it starts, and whether it is an ATX heading outside a code fence. */
export function* markdownLines(text: string): Generator<{ line: string; offset: number; heading: boolean }> {
  let fence: string | null = null;
  let offset = 0;
  while (offset < text.length) {
    const breakAt = text.indexOf("\n", offset);
    const end = breakAt < 0 ? text.length : breakAt + 1;
    const line = text.slice(offset, end);
    const opener = FENCE.exec(line)?.[1];
    let heading = false;
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
    } else if (opener) {
      fence = opener;
    } else {
      heading = ATX_HEADING.test(line);
    }
    yield { line, offset, heading };
    offset = end;
  }
}

/** The line ending `text` uses first: CR LF, a lone CR, or LF (also when it has none). */
export function lineEndingOf(text: string): string {
  return /\r\n|\r|\n/.exec(text)?.[0] ?? "\n";
}

/** `text` with every line break as `ending`: the editor hands back LF only, and a save puts the document's own back. */
export function withLineEnding(text: string, ending: string): string {
  return ending === "\n" ? text : text.replace(/\r\n|\r|\n/g, ending);
}
