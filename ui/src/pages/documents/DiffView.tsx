// A line diff (jsdiff) shown as hunks: long unchanged runs fold to their edges.
import { diffLines } from "diff";
import { useMemo } from "react";

const CONTEXT = 3;

interface Line {
  kind: "same" | "added" | "removed" | "fold";
  text: string;
}

/** Past this, two very different long texts are not worth the wait of a line diff. */
const DIFF_TIMEOUT_MS = 1500;

function linesOf(before: string, after: string): Line[] | null {
  const out: Line[] = [];
  const parts = diffLines(before, after, { timeout: DIFF_TIMEOUT_MS });
  if (parts === undefined) return null;
  parts.forEach((part, index) => {
    const lines = part.value.replace(/\n$/, "").split("\n");
    if (part.added || part.removed) {
      for (const text of lines) out.push({ kind: part.added ? "added" : "removed", text });
      return;
    }
    // an unchanged run keeps CONTEXT lines beside each change and folds the rest
    const head = index === 0 ? [] : lines.slice(0, CONTEXT);
    const tail = index === parts.length - 1 ? [] : lines.slice(-CONTEXT);
    if (lines.length <= head.length + tail.length + 1) {
      for (const text of lines) out.push({ kind: "same", text });
      return;
    }
    for (const text of head) out.push({ kind: "same", text });
    out.push({ kind: "fold", text: `${lines.length - head.length - tail.length} unchanged lines` });
    for (const text of tail) out.push({ kind: "same", text });
  });
  return out;
}

export function DiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = useMemo(() => linesOf(before, after), [before, after]);
  if (lines === null) {
    return (
      <figure className="diff" aria-label={label} data-testid="diff">
        <figcaption>{label}: too different to show line by line (more than {DIFF_TIMEOUT_MS / 1000} s to compute)</figcaption>
      </figure>
    );
  }
  const changed = lines.filter((line) => line.kind === "added" || line.kind === "removed").length;
  return (
    <figure className="diff" aria-label={label} data-testid="diff">
      <figcaption>
        {label}: {changed === 0 ? "no changes" : `${changed} changed lines`}
      </figcaption>
      <pre>
        {lines.map((line, index) => (
          <div key={index} className={`diff-${line.kind}`}>
            <span className="diff-sign" aria-hidden="true">
              {line.kind === "added" ? "+" : line.kind === "removed" ? "−" : line.kind === "fold" ? "⋯" : " "}
            </span>
            {line.kind === "added" ? <ins>{line.text}</ins> : line.kind === "removed" ? <del>{line.text}</del> : line.text}
          </div>
        ))}
      </pre>
    </figure>
  );
}
