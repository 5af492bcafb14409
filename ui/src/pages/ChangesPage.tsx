// Changes: what the working tree's change affects, before a commit. Each
// changed definition, riskiest first, with its dependents, the tests that
// reach it, and the tasks and documents that name it, each opening its
// place; then the other changed files. Asked again when a file is saved.
import { useCallback, useEffect, useState } from "react";
import { api, call, type Failure, type Schemas } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { counted } from "../counted";
import { documentHref } from "../links";
import { revisionOf, useLive, useOnNewRevision } from "../live";

type Changes = Schemas["Changes"];
type Symbol = Schemas["ChangedSymbol"];

function nodeHref(uid: string): string {
  return `/graph?node=${encodeURIComponent(uid)}`;
}

function taskHref(id: string): string {
  return `/board?task=${encodeURIComponent(id)}`;
}

export function ChangesPage() {
  const [changes, setChanges] = useState<Changes | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [staged, setStaged] = useState(false);

  const load = useCallback(async (onlyStaged: boolean) => {
    const result = await call(() => api.GET("/api/changes", { params: { query: onlyStaged ? { staged: true } : {} } }));
    if (!result.ok) {
      setFailure(result.failure);
      setChanges(null);
      return;
    }
    setFailure(null);
    setChanges(result.data);
  }, []);

  useEffect(() => {
    void load(staged);
  }, [load, staged]);

  // a saved file moves the graph; a task or a document moves what names a symbol
  const live = useLive();
  const sources = ["graph", "board", "docs"].map((area) => revisionOf(live, area));
  const moved = sources.every((r) => r === null) ? null : sources.reduce<number>((sum, r) => sum + (r ?? 0), 0);
  useOnNewRevision(moved, () => void load(staged));

  return (
    <section className="changes-page">
      <h1>Changes</h1>
      <p className="hint">
        What the {staged ? "staged changes" : "working tree's changes"} affect, riskiest first: each changed definition
        with its dependents, the tests that reach it, and the tasks and documents naming it.{" "}
        <label>
          <input type="checkbox" checked={staged} onChange={(event) => setStaged(event.target.checked)} /> staged only
        </label>
      </p>
      {failure ? <FailureNotice failure={failure} /> : null}
      {changes ? <ChangesList changes={changes} /> : null}
    </section>
  );
}

function ChangesList({ changes }: { changes: Changes }) {
  const others = changes.files.filter((file) => file.symbols === 0);
  return (
    <>
      <p data-testid="changes-summary">
        {changes.against}: {counted(changes.summary.files, "file")}, {counted(changes.summary.symbols, "definition")}{" "}
        changed
        {changes.summary.untested.length > 0 ? `, ${changes.summary.untested.length} untested` : ""}
      </p>
      {changes.symbols.length === 0 && others.length === 0 ? <p className="muted">Nothing has changed.</p> : null}
      <ul className="changes-list">
        {changes.symbols.map((symbol) => (
          <ChangedSymbol key={`${symbol.uid}:${symbol.change}`} symbol={symbol} />
        ))}
      </ul>
      {others.length > 0 ? (
        <>
          <h2>Other files</h2>
          <ul className="changes-list">
            {others.map((file) => (
              <li key={file.path} className="changes-file" data-testid="changed-file">
                <span className="badge">{file.change}</span> <code>{file.path}</code>
                {file.binary ? <span className="muted"> (binary)</span> : null}
                <Mentions tasks={file.tasks} documents={file.documents} />
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

function ChangedSymbol({ symbol }: { symbol: Symbol }) {
  return (
    <li className={`changes-symbol risk-${symbol.risk}`} data-testid="changed-symbol">
      <div className="changes-symbol-top">
        <span className={`badge risk ${symbol.risk}`}>{symbol.risk}</span>
        <span className="badge">{symbol.change}</span>
        <span className="badge">{symbol.kind}</span>
        {symbol.change === "removed" ? (
          <strong>{symbol.name}</strong>
        ) : (
          <a href={nodeHref(symbol.uid)}>
            <strong>{symbol.name}</strong>
          </a>
        )}
        <code className="muted">
          {symbol.path}:{symbol.line}
        </code>
        <span className="changes-reason">{symbol.risk_reason}</span>
      </div>
      {symbol.renamed_from ? <p className="hint">renamed from {symbol.renamed_from}</p> : null}
      <dl className="changes-details">
        {symbol.dependents.length > 0 ? (
          <>
            <dt>Dependents ({symbol.dependents_count})</dt>
            <dd>
              {symbol.dependents.map((dependent) => (
                <a key={`${dependent.node.uid}:${dependent.edge}`} href={nodeHref(dependent.node.uid)} className="chip">
                  {dependent.node.label}
                </a>
              ))}
            </dd>
          </>
        ) : null}
        {symbol.tests.length > 0 ? (
          <>
            <dt>Tests</dt>
            <dd>
              {symbol.tests.map((test) => (
                <a key={test.uid} href={nodeHref(test.uid)} className="chip">
                  {test.label}
                </a>
              ))}
            </dd>
          </>
        ) : null}
      </dl>
      <Mentions tasks={symbol.tasks} documents={symbol.documents} />
    </li>
  );
}

function Mentions({ tasks, documents }: { tasks: Schemas["TaskMention"][]; documents: Schemas["DocMention"][] }) {
  if (tasks.length === 0 && documents.length === 0) return null;
  return (
    <dl className="changes-details">
      {tasks.length > 0 ? (
        <>
          <dt>Tasks</dt>
          <dd>
            {tasks.map((task) => (
              <a key={task.id} href={taskHref(task.id)} className="chip" title={task.status}>
                {task.id} {task.title}
              </a>
            ))}
          </dd>
        </>
      ) : null}
      {documents.length > 0 ? (
        <>
          <dt>Documents</dt>
          <dd>
            {documents.map((document) => (
              <a
                key={`${document.mount}/${document.path}#${document.section ?? ""}`}
                href={documentHref(document.mount, document.path, document.section ?? "")}
                className="chip"
              >
                {document.path}
                {document.section ? `#${document.section}` : ""}
              </a>
            ))}
          </dd>
        </>
      ) : null}
    </dl>
  );
}
