// One save of a person's edit: its operations, and what came of it.
import type { Failure } from "../../api/client";
import { type Loaded, type Operation, type Receipt, loadDocument, loadReceipt, patchDocument } from "./docsApi";
import { headingOf, sectionText, spliceBytes } from "./merge";

export type Outcome =
  | { kind: "saved"; receipt: Receipt }
  | { kind: "conflict"; theirs: Loaded }
  | { kind: "failed"; failure: Failure };

/** The whole document as the person's edit of `scope` (a section anchor, or null) would make it. */
export function editedDocument(base: Loaded, scope: string | null, text: string): string {
  const section = scope === null ? undefined : base.outline.find((s) => s.anchor === scope);
  return section ? spliceBytes(base.content, section.start, section.end, text) : text;
}

/** A section edit that kept its heading replaces the section's body; anything else the document. */
export function operationsFor(base: Loaded, scope: string | null, text: string): Operation[] {
  const section = scope === null ? undefined : base.outline.find((s) => s.anchor === scope);
  if (section) {
    const heading = headingOf(sectionText(base.content, section));
    if (text.startsWith(heading)) {
      return [{ op: "replace_section", section: section.anchor, content: text.slice(heading.length) }];
    }
  }
  return [{ op: "replace_all", content: editedDocument(base, scope, text) }];
}

export async function save(
  mount: string,
  path: string,
  base: { rev: number; hash: string },
  requestId: string,
  operations: Operation[],
): Promise<Outcome> {
  const answer = await patchDocument({ mount, path, base, requestId, operations });
  if (answer.ok) return { kind: "saved", receipt: answer.data };
  if (answer.failure.error.code !== "STALE_REVISION") return { kind: "failed", failure: answer.failure };
  const theirs = await loadDocument(mount, path);
  return theirs.ok ? { kind: "conflict", theirs: theirs.data } : { kind: "failed", failure: theirs.failure };
}

/** What the hub knows of a request ID: a committed receipt counts as saved. */
export async function checkReceipt(requestId: string): Promise<{ receipt: Receipt | null; failure: Failure | null }> {
  const answer = await loadReceipt(requestId);
  return answer.ok ? { receipt: answer.data, failure: null } : { receipt: null, failure: answer.failure };
}
