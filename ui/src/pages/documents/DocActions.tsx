// Create, rename/move and delete, each confirmed in place before it is sent.
import { useState } from "react";
import type { Failure } from "../../api/client";
import { DocFailure } from "./DocFailure";
import { type Identity, type Receipt, createDocument, deleteDocument, moveDocument, newRequestId } from "./docsApi";

type Answer = { ok: true; data: Receipt } | { ok: false; failure: Failure };

/** One intent keeps one request ID across retries; a new intent gets a new one. */
function useIntent() {
  const [requestId, setRequestId] = useState(newRequestId);
  return { requestId, renew: () => setRequestId(newRequestId()) };
}

interface MoveProps {
  identity: Identity;
  onMoved: (to: string) => void;
  onCancel: () => void;
}

export function MoveForm({ identity, onMoved, onCancel }: MoveProps) {
  const [to, setTo] = useState(identity.path);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const intent = useIntent();
  const send = async () => {
    setBusy(true);
    const answer: Answer = await moveDocument(identity.mount, identity.path, to.trim(), identity, intent.requestId);
    setBusy(false);
    if (answer.ok) onMoved(answer.data.document?.path ?? to.trim());
    else setFailure(answer.failure);
  };
  return (
    <form
      className="doc-inline-form"
      aria-label="Rename or move"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <label>
        New path in the mount <input value={to} onChange={(e) => [setTo(e.target.value), intent.renew()]} autoFocus required />
      </label>
      <button type="submit" className="primary" disabled={busy || to.trim() === identity.path}>
        Move to {to.trim() || "…"}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {failure ? <DocFailure failure={failure} requestId={intent.requestId} onRetry={() => void send()} /> : null}
    </form>
  );
}

interface DeleteProps {
  identity: Identity;
  onDeleted: () => void;
  onCancel: () => void;
}

export function DeleteConfirm({ identity, onDeleted, onCancel }: DeleteProps) {
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const intent = useIntent();
  const send = async () => {
    setBusy(true);
    const answer: Answer = await deleteDocument(identity.mount, identity.path, identity, intent.requestId);
    setBusy(false);
    if (answer.ok) onDeleted();
    else setFailure(answer.failure);
  };
  return (
    <div className="doc-inline-form" role="alertdialog" aria-label="Delete the document">
      <p>
        Delete <code>{identity.path}</code>? Its history stays, and any revision can be read back.
      </p>
      <button type="button" className="danger" disabled={busy} onClick={() => void send()}>
        Delete
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {failure ? <DocFailure failure={failure} requestId={intent.requestId} onRetry={() => void send()} /> : null}
    </div>
  );
}

interface CreateProps {
  mount: string;
  folder: string;
  onCreated: (path: string) => void;
  onCancel: () => void;
}

export function CreateForm({ mount, folder, onCreated, onCancel }: CreateProps) {
  const [path, setPath] = useState(folder ? `${folder}/new-document.md` : "new-document.md");
  const [content, setContent] = useState("# New document\n\n");
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const intent = useIntent();
  const send = async () => {
    setBusy(true);
    const answer: Answer = await createDocument(mount, path.trim(), content, intent.requestId);
    setBusy(false);
    if (answer.ok) onCreated(answer.data.document?.path ?? path.trim());
    else setFailure(answer.failure);
  };
  return (
    <form
      className="doc-create"
      aria-label="New document"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <h2>New document in {mount}</h2>
      <label>
        Path <input value={path} onChange={(e) => [setPath(e.target.value), intent.renew()]} required autoFocus />
      </label>
      <label>
        Markdown
        <textarea value={content} onChange={(e) => [setContent(e.target.value), intent.renew()]} rows={10} />
      </label>
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={busy}>
          Create
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {failure ? <DocFailure failure={failure} requestId={intent.requestId} onRetry={() => void send()} /> : null}
    </form>
  );
}
