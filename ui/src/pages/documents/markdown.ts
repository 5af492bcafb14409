// Markdown to safe HTML. marked renders CommonMark + GFM (tables, task lists),
// highlight.js colours fenced code, and DOMPurify sanitises the result. Raw
// HTML in a document is never passed through: the renderer escapes it to
// text first, so DOMPurify is a second wall, not the only one. A document is
// lexed once and rendered in chunks of top-level blocks, so a long one shows
// its first screen before the rest is done.
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdownLanguage from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import "highlight.js/styles/github.css";
import { type Links, Marked, type Token, type Tokens } from "marked";
import type { Section } from "./docsApi";
import { documentHref, editorHref } from "../../links";
import { markdownLines } from "./lines";

const LANGUAGES = {
  bash, cpp, css, diff, go, java, javascript, json, markdown: markdownLanguage, python, rust, sql, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "shell", "console"], { languageName: "bash" });
hljs.registerAliases(["js", "jsx"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["rs"], { languageName: "rust" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml", "toml", "ini"], { languageName: "yaml" });
hljs.registerAliases(["c", "h", "hpp"], { languageName: "cpp" });

/** Where a rendered document lives, so its links resolve. */
export interface RenderPlace {
  mount: string;
  path: string;
  /** The repository's folder, for editor links; null when unknown. */
  repoRoot: string | null;
}

/** `file.ext:12` in a heading: a place in the code. */
const CODE_PLACE = /([A-Za-z0-9_.\-/]+\.[A-Za-z0-9]+):(\d+)/g;

/** DOMPurify's default URL rule, plus `vscode:` for "open in the editor". */
const ALLOWED_URI =
  /^(?:(?:(?:f|ht)tps?|mailto|tel|vscode):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function plainText(tokens: Token[] | undefined): string {
  if (!tokens) return "";
  return tokens
    .map((token) => {
      if ("tokens" in token && token.tokens) return plainText(token.tokens);
      if (token.type === "text" || token.type === "codespan" || token.type === "escape") return token.text;
      return "";
    })
    .join("");
}

/** The server's slug rule (GitHub's): lower case, spaces to dashes, letters, digits, - and _ kept. */
export function slugOf(title: string, seen: Map<string, number>): string {
  const base = Array.from(title.toLowerCase())
    .map((c) => (c === " " ? "-" : /[\p{L}\p{N}_-]/u.test(c) ? c : ""))
    .join("");
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

/** `docs/a/b.md` + `../c.md#x` → `docs/c.md#x`; null when it leaves the mount. */
function resolveRelative(from: string, href: string): string | null {
  const [target, hash] = href.split("#", 2);
  const parts = from.split("/").slice(0, -1);
  let decoded: string;
  try {
    decoded = decodeURI(target ?? "");
  } catch {
    return null; // a malformed %-escape: the link stays as written
  }
  for (const part of decoded.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/") + (hash ? `#${hash}` : "");
}

function codeLinks(title: string, place: RenderPlace): string {
  if (!/:\d/.test(title)) return "";
  const links: string[] = [];
  for (const match of title.matchAll(CODE_PLACE)) {
    const [, file, line] = match;
    if (!file || !line) continue;
    const graph = `/graph?node=${encodeURIComponent(`code:file:${file}`)}`;
    links.push(`<a class="code-link" href="${escapeHtml(graph)}" title="${escapeHtml(file)} in the graph">graph</a>`);
    const editor = editorHref(place.repoRoot, file, Number(line));
    if (editor) {
      links.push(`<a class="code-link" href="${escapeHtml(editor)}" title="${escapeHtml(`${file}:${line}`)} in the editor">editor</a>`);
    }
  }
  return links.length ? ` <span class="code-links">${links.join(" ")}</span>` : "";
}

/** Roughly this much source per chunk. */
const CHUNK_BYTES = 32 * 1024;

function renderer(place: RenderPlace, anchors: WeakMap<Token, string>, editable: boolean) {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      // raw HTML from a document is shown as text, never as markup
      html: ({ text }) => escapeHtml(text),
      code({ text, lang }: Tokens.Code) {
        const language = lang?.trim().split(/\s+/)[0] ?? "";
        const known = language !== "" && hljs.getLanguage(language) !== undefined;
        const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
        const name = known ? ` language-${escapeHtml(language)}` : "";
        return `<pre><code class="hljs${name}">${body}\n</code></pre>\n`;
      },
      heading(token: Tokens.Heading) {
        const inner = this.parser.parseInline(token.tokens);
        const anchor = anchors.get(token);
        if (anchor === undefined) return `<h${token.depth}>${inner}</h${token.depth}>\n`;
        const title = plainText(token.tokens);
        const edit = editable
          ? ` <button type="button" class="section-edit" data-section="${escapeHtml(anchor)}" aria-label="Edit the section ${escapeHtml(title)}">Edit</button>`
          : "";
        return `<h${token.depth} id="${escapeHtml(anchor)}" data-section="${escapeHtml(anchor)}">${inner}${codeLinks(title, place)}${edit}</h${token.depth}>\n`;
      },
      link(token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens);
        let href = token.href;
        const relative = !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith("/") && !href.startsWith("#");
        if (relative) {
          const resolved = resolveRelative(place.path, href);
          if (resolved !== null) {
            const [target, hash] = resolved.split("#", 2);
            href = documentHref(place.mount, target ?? "") + (hash ? `#${hash}` : "");
          }
        }
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
        return `<a href="${escapeHtml(href)}"${title}>${inner}</a>`;
      },
    },
  });
  return marked;
}

/** How far ahead of the last match a heading's title is looked for in the outline. */
const OUTLINE_WINDOW = 16;

/** Top-level headings get the server outline's anchors, matched by title in order. */
function assignAnchors(tokens: Token[], outline: Section[] | null, anchors: WeakMap<Token, string>) {
  const seen = new Map<string, number>();
  let next = 0;
  for (const token of tokens) {
    if (token.type !== "heading") continue;
    const title = plainText((token as Tokens.Heading).tokens).trim();
    const window = outline?.slice(next, next + OUTLINE_WINDOW) ?? [];
    const at = window.findIndex((section) => section.title === title);
    const found = window[at];
    if (found) {
      anchors.set(token, found.anchor);
      next += at + 1;
    } else {
      anchors.set(token, slugOf(title, seen));
    }
  }
}

let hooked = false;
function purifier() {
  if (!hooked) {
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && /^https?:/i.test(node.getAttribute("href") ?? "")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
    hooked = true;
  }
  return DOMPurify;
}

const PURIFY = {
  USE_PROFILES: { html: true },
  ALLOWED_URI_REGEXP: ALLOWED_URI,
  FORBID_TAGS: ["style", "form"],
  FORBID_ATTR: ["style"],
};

/** Where the first chunk of a long document may end: a heading line past CHUNK_BYTES, outside code fences. */
function firstCut(markdown: string): number | null {
  if (markdown.length < CHUNK_BYTES * 2) return null;
  for (const { offset, heading } of markdownLines(markdown)) {
    if (heading && offset >= CHUNK_BYTES) return offset;
    if (offset > CHUNK_BYTES * 4) return null;
  }
  return null;
}

export interface Chunk {
  /** Its place among the chunks; a chunk may come again, rendered from the whole document. */
  index: number;
  html: string;
  bytes: number;
}

/**
 * Safe HTML for `markdown`, chunk by chunk (each a run of top-level blocks).
 * A long document's first chunk is lexed on its own, so it shows before the
 * whole is lexed; it comes again from the whole (a link defined further down
 * may change it). With an outline (the server's), headings carry its anchors
 * and, when `editable`, an Edit button naming their section.
 */
export function* renderChunks(
  source: string,
  place: RenderPlace,
  outline: Section[] | null,
  editable: boolean,
): Generator<Chunk, void, void> {
  const markdown = source.replace(/\r\n?/g, "\n");
  const sanitizer = purifier();
  const render = (tokens: Token[], links: Links, marked: Marked) =>
    sanitizer.sanitize(marked.parser(Object.assign(tokens, { links })), PURIFY);
  const cut = firstCut(markdown);
  if (cut !== null) {
    const anchors = new WeakMap<Token, string>();
    const marked = renderer(place, anchors, editable);
    const tokens = marked.lexer(markdown.slice(0, cut));
    assignAnchors(tokens, outline, anchors);
    yield { index: 0, html: render(tokens, tokens.links, marked), bytes: cut };
  }
  const anchors = new WeakMap<Token, string>();
  const marked = renderer(place, anchors, editable);
  const tokens = marked.lexer(markdown);
  assignAnchors(tokens, outline, anchors);
  let start = 0;
  let offset = 0;
  for (let index = 0; start < tokens.length; index += 1) {
    let end = start;
    let bytes = 0;
    // the first chunk ends where the one lexed alone did, so they line up
    const enough = () => (index === 0 && cut !== null ? offset + bytes >= cut : bytes >= CHUNK_BYTES);
    while (end < tokens.length && (end === start || !enough())) {
      bytes += tokens[end]?.raw.length ?? 0;
      end += 1;
    }
    offset += bytes;
    yield { index, html: render(tokens.slice(start, end), tokens.links, marked), bytes };
    start = end;
  }
}
