// The mounts, one mount's folder tree with a filter, and the history's audit.
import { useMemo, useState } from "react";
import type { Failure } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";
import { navigate } from "../../router";
import { type AuditReport, type DocEntry, type MountInfo } from "./docsApi";
import { sizeOf, when } from "./format";
import { documentHref } from "../../links";
import { counted } from "../../counted";

interface Folder {
  name: string;
  folders: Map<string, Folder>;
  documents: DocEntry[];
}

function treeOf(documents: DocEntry[]): Folder {
  const root: Folder = { name: "", folders: new Map(), documents: [] };
  for (const document of documents) {
    const parts = document.path.split("/");
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      let next = folder.folders.get(part);
      if (!next) {
        next = { name: part, folders: new Map(), documents: [] };
        folder.folders.set(part, next);
      }
      folder = next;
    }
    folder.documents.push(document);
  }
  return root;
}

export function AccessBadges({ mount }: { mount: MountInfo }) {
  return (
    <>
      {mount.people === "read_only" ? <span className="badge read-only">read-only for people</span> : null}
      {mount.agents === "read_only" ? <span className="badge read-only">read-only for agents</span> : null}
    </>
  );
}

function FolderView({ folder, mount, selected }: { folder: Folder; mount: string; selected: string | null }) {
  const folders = [...folder.folders.values()].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <ul className="doc-tree">
      {folders.map((child) => (
        <li key={`folder:${child.name}`}>
          <span className="doc-folder">{child.name}/</span>
          <FolderView folder={child} mount={mount} selected={selected} />
        </li>
      ))}
      {folder.documents.map((document) => (
        <li key={document.path}>
          <a
            href={documentHref(mount, document.path)}
            className="doc-link"
            aria-current={document.path === selected ? "page" : undefined}
            data-testid="doc-entry"
            onClick={(event) => {
              event.preventDefault();
              navigate(documentHref(mount, document.path));
            }}
          >
            <span className="doc-title">{document.title}</span>
            <span className="doc-meta">
              {document.path.split("/").pop()} · {sizeOf(document.size)} · rev {document.rev}
            </span>
            <span className="doc-meta">
              {document.source} · {document.updated_by} · {when(document.updated_at)}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

interface Props {
  mounts: MountInfo[];
  mount: string;
  documents: DocEntry[] | null;
  total: number;
  listingFailure: Failure | null;
  onRetryListing: () => void;
  selected: string | null;
  audit: AuditReport | null;
  auditFailure: Failure | null;
  onAudit: () => void;
  onCreate: () => void;
}

export function DocSidebar(props: Props) {
  const { mounts, mount, documents, selected, audit } = props;
  const [filter, setFilter] = useState("");
  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    const all = documents ?? [];
    if (words.length === 0) return all;
    return all.filter((d) => words.every((w) => d.path.toLowerCase().includes(w) || d.title.toLowerCase().includes(w)));
  }, [documents, filter]);
  const tree = useMemo(() => treeOf(shown), [shown]);
  const current = mounts.find((m) => m.key === mount);
  return (
    <aside className="doc-sidebar">
      <nav aria-label="Mounts" className="mounts">
        {mounts.map((m) => (
          <a
            key={m.key}
            href={documentHref(m.key)}
            aria-current={m.key === mount ? "page" : undefined}
            data-testid="mount"
            onClick={(event) => {
              event.preventDefault();
              navigate(documentHref(m.key));
            }}
          >
            <strong>{m.name}</strong> <code>{m.key}</code>
            <AccessBadges mount={m} />
          </a>
        ))}
      </nav>
      <div className="doc-tree-tools">
        <label>
          Filter <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="path or title" />
        </label>
        <button type="button" onClick={props.onCreate} disabled={current?.people === "read_only"}>
          New document
        </button>
      </div>
      {props.listingFailure ? <FailureNotice failure={props.listingFailure} onRetry={props.onRetryListing} /> : null}
      {documents === null ? (
        <p className="muted">Loading the documents…</p>
      ) : documents.length === 0 ? (
        <p className="muted">{current?.exists === false ? "This mount's folder does not exist yet: a new document creates it." : "No Markdown documents here yet."}</p>
      ) : (
        <>
          <p className="muted" data-testid="doc-count">
            {shown.length === documents.length
              ? counted(props.total, "document")
              : `${shown.length} of ${counted(props.total, "document")}`}
          </p>
          <nav aria-label="Documents">
            <FolderView folder={tree} mount={mount} selected={selected} />
          </nav>
        </>
      )}
      <section className={`audit ${audit && (!audit.verified || audit.writes_refused) ? "audit-alarm" : ""}`} data-testid="audit" aria-label="History audit">
        <h2>History audit</h2>
        {props.auditFailure ? <FailureNotice failure={props.auditFailure} onRetry={props.onAudit} /> : null}
        {audit === null ? (
          <p className="muted">Not audited yet.</p>
        ) : audit.verified && !audit.writes_refused ? (
          <p>
            Chain verified: {audit.entries} entries, {audit.contents} contents.
            {audit.head ? (
              <>
                {" "}Head checkpoint <code title={audit.head.entry_hash}>#{audit.head.seq} {audit.head.entry_hash.slice(0, 12)}…</code>
              </>
            ) : null}
          </p>
        ) : (
          <p role="alert">
            <strong>Writes are refused until the history is repaired.</strong>{" "}
            {audit.first_bad ? `The first bad entry is #${audit.first_bad.seq}: ${audit.first_bad.problem}.` : "The audit failed."} Reading still works.
          </p>
        )}
        <button type="button" onClick={props.onAudit}>
          Audit again
        </button>
      </section>
    </aside>
  );
}
