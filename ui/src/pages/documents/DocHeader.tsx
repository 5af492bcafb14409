// A document's identity, last change and access, its actions, and what just happened to it.
import { AccessBadges } from "./DocSidebar";
import type { DocEntry, Loaded, MountInfo } from "./docsApi";
import { sizeOf, when } from "./format";

export type Panel = "read" | "history" | "move" | "delete";

interface Props {
  mount: MountInfo;
  path: string;
  doc: Loaded;
  entry: DocEntry | null;
  panel: Panel;
  editing: boolean;
  notice: string | null;
  onDismissNotice: () => void;
  onEdit: () => void;
  onPanel: (panel: Panel) => void;
}

export function DocHeader({ mount, path, doc, entry, panel, editing, notice, onDismissNotice, onEdit, onPanel }: Props) {
  const canWrite = mount.people !== "read_only";
  const first = doc.outline[0];
  // a document that opens with its own title shows it once, in the text
  const startsWithTitle = first?.level === 1 && first.line <= 3;
  return (
    <header className="doc-header">
      {startsWithTitle ? null : <h1>{first?.title ?? path}</h1>}
      <p className="doc-identity">
        <code>
          {mount.key}/{path}
        </code>{" "}
        · rev <span data-testid="doc-rev">{doc.identity.rev}</span> · <code title={doc.identity.hash}>{doc.identity.hash.slice(0, 12)}</code>
        {entry ? ` · ${sizeOf(entry.size)} · last change by ${entry.updated_by} (${entry.source}), ${when(entry.updated_at)}` : null}{" "}
        <AccessBadges mount={mount} />
      </p>
      <div className="doc-toolbar">
        <button type="button" onClick={onEdit} disabled={!canWrite || editing}>
          Edit document
        </button>
        <button type="button" aria-pressed={panel === "history"} onClick={() => onPanel(panel === "history" ? "read" : "history")}>
          History
        </button>
        <button type="button" onClick={() => onPanel("move")} disabled={!canWrite || editing}>
          Rename or move
        </button>
        <button type="button" onClick={() => onPanel("delete")} disabled={!canWrite || editing}>
          Delete
        </button>
      </div>
      {!canWrite ? (
        <p className="notice notice-permission" data-testid="read-only">
          <strong>This mount is read-only for people.</strong> {mount.name} (<code>{mount.key}</code>) is marked{" "}
          <code>people = "read_only"</code> in docs.toml: you can read it and its history, not edit it here.
        </p>
      ) : null}
      {notice ? (
        <p className="notice notice-ok" role="status" data-testid="doc-notice">
          {notice}{" "}
          <button type="button" className="quiet" aria-label="Dismiss" onClick={onDismissNotice}>
            ×
          </button>
        </p>
      ) : null}
    </header>
  );
}
