// Sections as a merge sees them, and the three-way merge that lets a person's
// edit land on top of someone else's change to other sections. Splitting is
// by ATX heading lines outside code fences; chunks are line ranges, so they
// always join back to the exact text, whatever the split missed.
import type { Section } from "./docsApi";
import { ATX_HEADING, markdownLines } from "./lines";

interface Chunk {
  /** The heading line with its repeat count; "" for the text before the first heading. */
  key: string;
  text: string;
}

export function chunksOf(text: string): Chunk[] {
  const chunks: Chunk[] = [{ key: "", text: "" }];
  const seen = new Map<string, number>();
  for (const { line, heading } of markdownLines(text)) {
    if (heading) {
      const title = line.trim();
      const count = seen.get(title) ?? 0;
      seen.set(title, count + 1);
      chunks.push({ key: `${title}\u0000${count}`, text: line });
      continue;
    }
    const last = chunks[chunks.length - 1];
    if (last) last.text += line;
  }
  return chunks;
}

const keysOf = (chunks: Chunk[]) => chunks.map((chunk) => chunk.key).join("\u0001");

export type Merge = { clean: true; text: string } | { clean: false; reason: string };

/** Which side wins where both changed the same section. */
export type Preference = "mine" | "theirs";

/**
 * `mine` and `theirs` both start from `base`. Clean when they changed different
 * sections and at most one side added, removed or renamed headings; with a
 * preference, a section both changed takes that side's text.
 */
export function mergeThreeWay(base: string, mine: string, theirs: string, prefer?: Preference): Merge {
  if (mine === base) return { clean: true, text: theirs };
  if (theirs === base || theirs === mine) return { clean: true, text: mine };
  const unresolved = (reason: string): Merge =>
    prefer ? { clean: true, text: prefer === "mine" ? mine : theirs } : { clean: false, reason };
  const [b, m, t] = [chunksOf(base), chunksOf(mine), chunksOf(theirs)];
  const baseText = new Map(b.map((chunk) => [chunk.key, chunk.text]));
  let skeleton: Chunk[];
  let other: Chunk[];
  let otherIsMine: boolean;
  if (keysOf(m) === keysOf(b)) [skeleton, other, otherIsMine] = [t, m, true];
  else if (keysOf(t) === keysOf(b)) [skeleton, other, otherIsMine] = [m, t, false];
  else return unresolved("both sides added, removed or renamed headings");
  const merged = skeleton.map((chunk) => ({ ...chunk }));
  for (const chunk of other) {
    if (chunk.text === baseText.get(chunk.key)) continue;
    const name = chunk.key.split("\u0000")[0] || "the opening text";
    const target = merged.find((candidate) => candidate.key === chunk.key);
    if (!target) return unresolved(`the other side removed or renamed "${name}"`);
    if (target.text !== baseText.get(chunk.key) && target.text !== chunk.text) {
      if (!prefer) return { clean: false, reason: `both changed "${name}"` };
      const otherWins = (prefer === "mine") === otherIsMine;
      if (!otherWins) continue;
    }
    target.text = chunk.text;
  }
  return { clean: true, text: merged.map((chunk) => chunk.text).join("") };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The server's outline counts bytes of UTF-8; these slice a string by them. */
export function sliceBytes(text: string, start: number, end: number): string {
  return decoder.decode(encoder.encode(text).subarray(start, end));
}

export function spliceBytes(text: string, start: number, end: number, insert: string): string {
  const bytes = encoder.encode(text);
  return decoder.decode(bytes.subarray(0, start)) + insert + decoder.decode(bytes.subarray(end));
}

/** A section's text, heading included. */
export function sectionText(content: string, section: Section): string {
  return sliceBytes(content, section.start, section.end);
}

/** The heading line(s) of a section's text: one ATX line, or a setext title and underline. */
export function headingOf(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const first = lines[0] ?? "";
  const second = lines[1] ?? "";
  if (!ATX_HEADING.test(first) && /^ {0,3}(=+|-+)[ \t]*\n?$/.test(second)) return first + second;
  return first;
}
