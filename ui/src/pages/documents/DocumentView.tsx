// One document: rendered with its outline, edited by section or whole, its
// conflicts, history, move and delete. Follows the live feed: a change made
// elsewhere refreshes it, or, while the person edits, is shown beside the edit.
import { Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Failure } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";
import { useOnNewRevision } from "../../live";
import { navigate } from "../../router";
import { DeleteConfirm, MoveForm } from "./DocActions";
import { ConflictPanel, type Conflict } from "./ConflictPanel";
import { DiffView } from "./DiffView";
import { DocFailure } from "./DocFailure";
import { DocHeader, type Panel } from "./DocHeader";
import { DocOutline, scrollToSection } from "./DocOutline";
import { when } from "./format";
import { type DocEntry, type Loaded, type MountInfo, type Operation, type Receipt, loadDocument, newRequestId } from "./docsApi";
import { clearDraft, loadDraft, saveDraft } from "./drafts";
import { HistoryPanel } from "./HistoryPanel";
import { lineEndingOf } from "./lines";
import { documentHref } from "../../links";
import type { RenderPlace } from "./markdown";
import { MarkdownView } from "./MarkdownView";
import { sectionText } from "./merge";
import { editedDocument, operationsFor, save } from "./saving";

// CodeMirror comes with the first edit, not with every reader
const DocEditor = lazy(() => import("./DocEditor").then((module) => ({ default: module.DocEditor })));

interface Editing {
  /** A section's anchor, or null for the whole document. */
  scope: string | null;
  /** The document as it was when the edit started: the write's base. */
  base: Loaded;
  initialText: string;
  requestId: string;
  restoredAt: string | null;
  /** A restored draft whose base revision could not be read back: it now rests on the current one. */
  baseLost?: boolean;
}

interface Props {
  mount: MountInfo;
  path: string;
  entry: DocEntry | null;
  repoRoot: string | null;
  docsRevision: number | null;
}

export function DocumentView({ mount, path, entry, repoRoot, docsRevision }: Props) {
  const [doc, setDoc] = useState<Loaded | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [panel, setPanel] = useState<Panel>("read");
  const [editing, setEditing] = useState<Editing | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [saveFailure, setSaveFailure] = useState<Failure | null>(null);
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [draftKept, setDraftKept] = useState<boolean | null>(null);
  const [showTheirs, setShowTheirs] = useState(false);
  const textRef = useRef<() => string>(() => "");
  /** Counts editor sessions: a new one (new text to edit) remounts the editor; a new request ID does not. */
  const sessions = useRef(0);
  const [session, setSession] = useState(0);
  const draftTimer = useRef<number | undefined>(undefined);
  /** The last request ID sent and what it carried: a changed edit is a new intent. */
  const attempted = useRef<{ requestId: string; body: string } | null>(null);
  /** The request ID of the last write sent, for its receipt. */
  const lastRequestId = useRef("");
  const canWrite = mount.people !== "read_only";
  const place = useMemo<RenderPlace>(() => ({ mount: mount.key, path, repoRoot }), [mount.key, path, repoRoot]);

  /** The hash last shown or saved: a reload that finds another one says so. */
  const knownHash = useRef<string | null>(null);
  /** Whether an edit is open: the editor says itself what changed meanwhile. */
  const editingNow = useRef(false);
  editingNow.current = editing !== null;
  const reload = useCallback(async () => {
    const answer = await loadDocument(mount.key, path);
    if (answer.ok) {
      setFailure(null);
      const hash = answer.data.identity.hash;
      if (knownHash.current !== null && knownHash.current !== hash && !editingNow.current) {
        setNotice(`Updated to rev ${answer.data.identity.rev}: changed elsewhere while you were here.`);
      }
      knownHash.current = hash;
      // the same revision again (another document changed) keeps what is on screen
      setDoc((shown) => (shown?.identity.hash === hash && shown.identity.rev === answer.data.identity.rev ? shown : answer.data));
    } else setFailure(answer.failure);
    return answer;
  }, [mount.key, path]);

  /** Keeps the edit in local storage a moment after the last change. */
  const keepDraft = useCallback(
    (state: Editing) => {
      window.clearTimeout(draftTimer.current);
      draftTimer.current = window.setTimeout(() => {
        const text = textRef.current();
        const draft = { scope: state.scope, text, base: state.base.identity, requestId: state.requestId, savedAt: new Date().toISOString() };
        setDraftKept(saveDraft(mount.key, path, draft));
      }, 300);
    },
    [mount.key, path],
  );

  const beginEditing = useCallback(
    (state: Editing, keepNow: boolean) => {
      textRef.current = () => state.initialText;
      sessions.current += 1;
      setSession(sessions.current);
      setEditing(state);
      setConflict(null);
      setSaveFailure(null);
      setPanel("read");
      if (keepNow) keepDraft(state);
    },
    [keepDraft],
  );

  // first load, then a draft left by an earlier visit reopens its editor
  useEffect(() => {
    let live = true;
    void (async () => {
      const answer = await reload();
      const draft = loadDraft(mount.key, path);
      if (!live || !answer.ok || !draft) return;
      let base = answer.data;
      let baseLost = false;
      if (draft.base.hash !== base.identity.hash) {
        const past = await loadDocument(mount.key, path, draft.base.rev);
        if (past.ok && past.data.identity.hash === draft.base.hash) base = past.data;
        else baseLost = true;
      }
      if (!live) return;
      beginEditing(
        { scope: draft.scope, base, initialText: draft.text, requestId: draft.requestId, restoredAt: draft.savedAt, baseLost },
        false,
      );
      setDraftKept(true);
    })();
    return () => {
      live = false;
      window.clearTimeout(draftTimer.current);
    };
  }, [mount.key, path, reload, beginEditing]);

  useOnNewRevision(docsRevision, () => void reload());

  /** The deep link's anchor, until the chunk holding it is in the page. */
  const pendingAnchor = useRef(decodeURIComponent(window.location.hash.slice(1)));
  const jumpWhenThere = useCallback(() => {
    const anchor = pendingAnchor.current;
    if (anchor && document.querySelector(`[data-section="${CSS.escape(anchor)}"]`)) {
      pendingAnchor.current = "";
      scrollToSection(anchor);
    }
  }, []);

  const finishSaved = useCallback(
    (receipt: Receipt, what: string) => {
      clearDraft(mount.key, path);
      setEditing(null);
      setConflict(null);
      setSaveFailure(null);
      setDraftKept(null);
      attempted.current = null;
      knownHash.current = receipt.document?.hash ?? null;
      setNotice(`${what} as rev ${receipt.document?.rev ?? "?"}.`);
      void reload();
    },
    [mount.key, path, reload],
  );

  const send = useCallback(
    async (state: Editing, operations: Operation[], mine: string, what: string) => {
      setSaving(true);
      setSaveFailure(null);
      lastRequestId.current = state.requestId;
      const outcome = await save(mount.key, path, state.base.identity, state.requestId, operations);
      setSaving(false);
      if (outcome.kind === "saved") return finishSaved(outcome.receipt, what);
      if (outcome.kind === "conflict") {
        setDoc(outcome.theirs);
        setConflict({ base: state.base, theirs: outcome.theirs, mine });
        return;
      }
      setSaveFailure(outcome.failure);
    },
    [finishSaved, mount.key, path],
  );

  const saveEdit = useCallback(() => {
    if (!editing) return;
    const text = textRef.current();
    const operations = operationsFor(editing.base, editing.scope, text);
    const body = JSON.stringify(operations);
    let state = editing;
    if (attempted.current && attempted.current.requestId === editing.requestId && attempted.current.body !== body) {
      state = { ...editing, requestId: newRequestId() };
      setEditing(state);
      keepDraft(state);
    }
    attempted.current = { requestId: state.requestId, body };
    void send(state, operations, editedDocument(state.base, state.scope, text), "Saved");
  }, [editing, keepDraft, send]);

  const startEditing = (scope: string | null) => {
    if (!doc) return;
    const section = scope === null ? undefined : doc.outline.find((s) => s.anchor === scope);
    const initialText = section ? sectionText(doc.content, section) : doc.content;
    beginEditing({ scope: section ? section.anchor : null, base: doc, initialText, requestId: newRequestId(), restoredAt: null }, false);
  };

  if (failure && !doc) return <FailureNotice failure={failure} onRetry={() => void reload()} />;
  if (!doc) return <p className="muted">Loading {path}…</p>;

  const changedMeanwhile = editing !== null && doc.identity.hash !== editing.base.identity.hash && conflict === null;
  const scopeTitle = editing?.scope ? doc.outline.find((s) => s.anchor === editing.scope)?.title ?? editing.scope : null;

  return (
    <article className={editing ? "doc-view editing" : "doc-view"} data-testid="document" data-rev={doc.identity.rev}>
      <DocHeader
        mount={mount}
        path={path}
        doc={doc}
        entry={entry}
        panel={panel}
        editing={editing !== null}
        notice={notice}
        onDismissNotice={() => setNotice(null)}
        onEdit={() => startEditing(null)}
        onPanel={setPanel}
      />

      {panel === "move" ? (
        <MoveForm
          identity={doc.identity}
          onCancel={() => setPanel("read")}
          onMoved={(to) => {
            clearDraft(mount.key, path);
            navigate(documentHref(mount.key, to));
          }}
        />
      ) : null}
      {panel === "delete" ? (
        <DeleteConfirm identity={doc.identity} onCancel={() => setPanel("read")} onDeleted={() => navigate(documentHref(mount.key))} />
      ) : null}
      {panel === "history" ? (
        <HistoryPanel
          mount={mount.key}
          path={path}
          current={doc}
          canWrite={canWrite}
          onRestore={(content, rev) => {
            const state: Editing = { scope: null, base: doc, initialText: content, requestId: newRequestId(), restoredAt: null };
            void send(state, [{ op: "replace_all", content }], content, `Restored rev ${rev}`);
          }}
        />
      ) : null}
      {saveFailure && !editing ? <DocFailure failure={saveFailure} requestId={lastRequestId.current} /> : null}

      {conflict && editing ? (
        <ConflictPanel
          conflict={conflict}
          busy={saving}
          onApply={(text) => {
            const state: Editing = { scope: null, base: conflict.theirs, initialText: text, requestId: newRequestId(), restoredAt: null };
            beginEditing(state, true);
            setConflict(null);
            void send(state, [{ op: "replace_all", content: text }], text, "Re-applied your edit");
          }}
          onEditByHand={(text) =>
            beginEditing({ scope: null, base: conflict.theirs, initialText: text, requestId: newRequestId(), restoredAt: null }, true)
          }
          onDiscard={() => {
            clearDraft(mount.key, path);
            setConflict(null);
            setEditing(null);
            setDraftKept(null);
          }}
        />
      ) : null}

      {editing && !conflict ? (
        <>
          {editing.restoredAt ? (
            <p className="notice" data-testid="draft-restored">
              Your unsaved edit from {when(editing.restoredAt)} is back, based on rev {editing.base.identity.rev}.
              {editing.baseLost
                ? " The revision it started from could not be read back: compare it with the text below before saving, or saving replaces what changed since."
                : null}
            </p>
          ) : null}
          {changedMeanwhile ? (
            <div className="notice notice-conflict" role="status" data-testid="changed-meanwhile">
              <p className="notice-message">
                Changed since you started: the document is now at rev {doc.identity.rev}. Saving will show both changes.
              </p>
              <button type="button" onClick={() => setShowTheirs(!showTheirs)}>
                {showTheirs ? "Hide" : "Show"} what changed
              </button>
              {showTheirs ? <DiffView before={editing.base.content} after={doc.content} label="Changed since you started" /> : null}
            </div>
          ) : null}
          {saveFailure ? (
            <DocFailure
              failure={saveFailure}
              requestId={editing.requestId}
              onRetry={saveEdit}
              onNewIntent={() => {
                const state = { ...editing, requestId: newRequestId() };
                setEditing(state);
                keepDraft(state);
                setSaveFailure(null);
              }}
              onCommitted={(receipt) => finishSaved(receipt, "Saved")}
            />
          ) : null}
          <Suspense fallback={<p className="muted">Opening the editor…</p>}>
            <DocEditor
              key={session}
              initialText={editing.initialText}
              lineEnding={lineEndingOf(editing.base.content)}
              textRef={textRef}
              place={place}
              label={scopeTitle ? `Editing the section “${scopeTitle}”` : "Editing the whole document"}
              saving={saving}
              onChange={() => keepDraft(editing)}
              onSave={saveEdit}
              onCancel={() => {
                clearDraft(mount.key, path);
                setEditing(null);
                setSaveFailure(null);
                setDraftKept(null);
              }}
            />
          </Suspense>
          <p className="muted" data-testid="draft-state">
            {draftKept === null ? "" : draftKept ? "Your draft is kept in this browser until it is saved." : "This browser would not keep a copy of your draft: save soon."}
          </p>
        </>
      ) : null}

      {/* the whole document in the editor has its preview: the page below would show it twice */}
      <div className={doc.outline.length > 1 ? "doc-body with-outline" : "doc-body"} hidden={editing !== null && editing.scope === null}>
        {doc.outline.length > 1 ? <DocOutline outline={doc.outline} /> : null}
        <MarkdownView
          markdown={doc.content}
          place={place}
          outline={doc.outline}
          editable={canWrite}
          testId="rendered"
          onProgress={jumpWhenThere}
          onClick={(event) => {
            const target = event.target as HTMLElement;
            const edit = target.closest<HTMLElement>("button.section-edit");
            if (edit?.dataset.section) return startEditing(edit.dataset.section);
            const href = target.closest("a")?.getAttribute("href");
            if (!href) return;
            if (href.startsWith("#")) {
              event.preventDefault();
              scrollToSection(decodeURIComponent(href.slice(1)));
            } else if (/^\/(documents|graph|board|search)(\/|\?|$)/.test(href)) {
              event.preventDefault();
              navigate(href);
            }
          }}
        />
      </div>
    </article>
  );
}
