// A person's unsaved edit lives in local storage until the hub has it, so a
// reload, a crash or a conflict never loses it. The draft also keeps the
// intent's request ID: a retry after a network failure sends the same one.
export interface Draft {
  /** The section's anchor, or null for the whole document. */
  scope: string | null;
  text: string;
  base: { rev: number; hash: string };
  requestId: string;
  savedAt: string;
}

const keyOf = (mount: string, path: string) => `cos-hub:draft:${mount}:${path}`;

export function loadDraft(mount: string, path: string): Draft | null {
  try {
    const raw = window.localStorage.getItem(keyOf(mount, path));
    if (!raw) return null;
    const draft = JSON.parse(raw) as Partial<Draft>;
    if (typeof draft.text !== "string" || typeof draft.requestId !== "string" || !draft.base) return null;
    return {
      scope: typeof draft.scope === "string" ? draft.scope : null,
      text: draft.text,
      base: draft.base,
      requestId: draft.requestId,
      savedAt: draft.savedAt ?? "",
    };
  } catch {
    return null;
  }
}

/** False when the browser refused to keep it (storage full or off). */
export function saveDraft(mount: string, path: string, draft: Draft): boolean {
  try {
    window.localStorage.setItem(keyOf(mount, path), JSON.stringify(draft));
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(mount: string, path: string): void {
  try {
    window.localStorage.removeItem(keyOf(mount, path));
  } catch {
    // nothing was kept, so nothing is lost
  }
}
