// Create, rename/move and delete, each confirmed in place before it is sent.
import { useState } from "react";
import type { Failure } from "../../api/client";
import { DocFailure } from "./DocFailure";
import { type Identity, type Receipt, createDocument, deleteDocument, moveDocument, newRequestId } from "./docsApi";

type Answer = { ok: true; data: Receipt } | { ok: false; failure: Failure };

/**
 * One write: its intent keeps one request ID across retries (a new intent,
 * `renew`, gets a new one), and `send` runs it, keeping what went wrong.
 */
function useWrite(write: (requestId: string) => Promise<Answer>, onDone: (receipt: Receipt) => void) {
  const [requestId, setRequestId] = useState(newRequestId);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    const answer = await write(requestId);
    setBusy(false);
    if (answer.ok) onDone(answer.data);
    else setFailure(answer.failure);
  };
  return { requestId, renew: () => setRequestId(newRequestId()), failure, busy, send };
}

interface MoveProps {
  identity: Identity;
  onMoved: (to: string) => void;
  onCancel: () => void;
}

export function MoveForm({ identity, onMoved, onCancel }: MoveProps) {
  const [to, setTo] = useState(identity.path);
  const intent = useWrite(
    (requestId) => moveDocument(identity.mount, identity.path, to.trim(), identity, requestId),
    (receipt) => onMoved(receipt.document?.path ?? to.trim()),
  );
  return (
    <form
      className="doc-inline-form"
      aria-label="Rename or move"
      onSubmit={(event) => {
        event.preventDefault();
        void intent.send();
      }}
    >
      <label>
        New path in the mount <input value={to} onChange={(e) => [setTo(e.target.value), intent.renew()]} autoFocus required />
      </label>
      <button type="submit" className="primary" disabled={intent.busy || to.trim() === identity.path}>
        Move to {to.trim() || "…"}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {intent.failure ? <DocFailure failure={intent.failure} requestId={intent.requestId} onRetry={() => void intent.send()} /> : null}
    </form>
  );
}

interface DeleteProps {
  identity: Identity;
  onDeleted: () => void;
  onCancel: () => void;
}

export function DeleteConfirm({ identity, onDeleted, onCancel }: DeleteProps) {
  const intent = useWrite((requestId) => deleteDocument(identity.mount, identity.path, identity, requestId), onDeleted);
  return (
    <div className="doc-inline-form" role="alertdialog" aria-label="Delete the document">
      <p>
        Delete <code>{identity.path}</code>? Its history stays, and any revision can be read back.
      </p>
      <button type="button" className="danger" disabled={intent.busy} onClick={() => void intent.send()}>
        Delete
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {intent.failure ? <DocFailure failure={intent.failure} requestId={intent.requestId} onRetry={() => void intent.send()} /> : null}
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
  const intent = useWrite(
    (requestId) => createDocument(mount, path.trim(), content, requestId),
    (receipt) => onCreated(receipt.document?.path ?? path.trim()),
  );
  return (
    <form
      className="doc-create"
      aria-label="New document"
      onSubmit={(event) => {
        event.preventDefault();
        void intent.send();
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
        <button type="submit" className="primary" disabled={intent.busy}>
          Create
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {intent.failure ? <DocFailure failure={intent.failure} requestId={intent.requestId} onRetry={() => void intent.send()} /> : null}
    </form>
  );
}
