import { expect, test } from "@playwright/test";
import fc from "fast-check";
import { markdownLines } from "../src/pages/documents/lines";
import { chunksOf, mergeThreeWay, sliceBytes, spliceBytes } from "../src/pages/documents/merge";

// Pure rules of the documents page, over generated Markdown (no browser needed).

const line = fc.oneof(
  fc.constantFrom("# Title\n", "## Setup\n", "## Use\n", "### Deep\n", "```\n", "~~~\n", "\n", "- item\n", "    # indented code\n"),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((text) => `${text.replace(/\n/g, " ")}\n`),
);
const markdown = fc.array(line, { maxLength: 30 }).map((lines) => lines.join(""));

/** A document of sections with distinct headings, as a person and an agent would edit it. */
const sectioned = fc
  .uniqueArray(fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,8}$/), { minLength: 2, maxLength: 6 })
  .chain((titles) =>
    fc.tuple(
      fc.constant(titles),
      fc.array(fc.string({ maxLength: 20 }).map((body) => body.replace(/[\n#`~]/g, " ")), {
        minLength: titles.length,
        maxLength: titles.length,
      }),
    ),
  );

function join(titles: string[], bodies: string[]): string {
  return titles.map((title, index) => `## ${title.trim() || "x"} ${index}\n\n${bodies[index]}\n\n`).join("");
}

test("sections and lines always join back to the exact text", () => {
  fc.assert(
    fc.property(markdown, (text) => {
      expect(chunksOf(text).map((chunk) => chunk.text).join("")).toBe(text);
      expect(Array.from(markdownLines(text), (each) => each.line).join("")).toBe(text);
    }),
    { numRuns: 500 },
  );
});

test("a merge with one side unchanged is the other side", () => {
  fc.assert(
    fc.property(markdown, markdown, (base, other) => {
      expect(mergeThreeWay(base, other, base)).toEqual({ clean: true, text: other });
      expect(mergeThreeWay(base, base, other)).toEqual({ clean: true, text: other });
    }),
    { numRuns: 300 },
  );
});

test("edits of different sections merge into both; of the same section they do not", () => {
  fc.assert(
    fc.property(sectioned, fc.nat(), fc.nat(), fc.string({ minLength: 1, maxLength: 10 }), (input, a, b, word) => {
      const [titles, bodies] = input;
      const mineAt = a % titles.length;
      const theirsAt = b % titles.length;
      const base = join(titles, bodies);
      const mineBodies = bodies.map((body, index) => (index === mineAt ? `${body} mine ${word.replace(/\n/g, "")}` : body));
      const theirBodies = bodies.map((body, index) => (index === theirsAt ? `${body} theirs` : body));
      const mine = join(titles, mineBodies);
      const theirs = join(titles, theirBodies);
      const merged = mergeThreeWay(base, mine, theirs);
      if (mineAt === theirsAt) {
        expect(merged.clean).toBe(false);
        expect(mergeThreeWay(base, mine, theirs, "mine")).toEqual({ clean: true, text: mine });
        expect(mergeThreeWay(base, mine, theirs, "theirs")).toEqual({ clean: true, text: theirs });
      } else {
        const both = join(titles, bodies.map((body, index) => (index === mineAt ? mineBodies[index] : index === theirsAt ? theirBodies[index] : body)) as string[]);
        expect(merged).toEqual({ clean: true, text: both });
      }
    }),
    { numRuns: 300 },
  );
});

test("byte offsets (the server's outline) slice and splice any Unicode text", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.nat(), fc.nat(), (text, x, y) => {
      const bytes = new TextEncoder().encode(text);
      // cut only at character boundaries, as the server's offsets are
      const boundaries = [0];
      for (let i = 0, at = 0; i < text.length; ) {
        const point = text.codePointAt(i) ?? 0;
        const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
        at += size;
        i += point > 0xffff ? 2 : 1;
        boundaries.push(at);
      }
      const start = boundaries[x % boundaries.length] ?? 0;
      const end = Math.max(start, boundaries[y % boundaries.length] ?? 0);
      const middle = sliceBytes(text, start, end);
      expect(sliceBytes(text, 0, start) + middle + sliceBytes(text, end, bytes.length)).toBe(text);
      expect(spliceBytes(text, start, end, middle)).toBe(text);
    }),
    { numRuns: 500 },
  );
});
