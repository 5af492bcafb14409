// One document's timeline, a diff between any two of its revisions, and
// "restore this revision" (a whole-document patch like any other save).
import { useCallback, useEffect, useRef, useState } from "react";
import type { Failure } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";
import { DiffView } from "./DiffView";
import { type DocHistoryEntry, type Loaded, loadDocument, loadHistory } from "./docsApi";
import { when } from "./format";

interface PickerProps {
  label: string;
  /** What a screen reader hears: "From revision". */
  name: string;
  revs: number[];
  value: number | null;
  onChange: (rev: number) => void;
}

function RevisionPicker(props: PickerProps) {
  return (
    <label>
      {props.label}{" "}
      <select aria-label={props.name} value={props.value ?? ""} onChange={(e) => props.onChange(Number(e.target.value))}>
        {props.revs.map((rev) => (
          <option key={rev} value={rev}>
            rev {rev}
          </option>
        ))}
      </select>
    </label>
  );
}

interface Props {
  mount: string;
  path: string;
  current: Loaded;
  canWrite: boolean;
  onRestore: (content: string, rev: number) => void;
}

export function HistoryPanel({ mount, path, current, canWrite, onRestore }: Props) {
  const [entries, setEntries] = useState<DocHistoryEntry[] | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number>(current.identity.rev);
  // past revisions never change: each is read once
  const contents = useRef(new Map<number, string>());
  const [confirming, setConfirming] = useState<number | null>(null);

  const load = useCallback(async () => {
    const answer = await loadHistory(mount, path);
    if (!answer.ok) return setFailure(answer.failure);
    setFailure(null);
    const own = answer.data.entries.filter((entry) => entry.path === path && entry.op !== "delete");
    setEntries(own);
    setTo(current.identity.rev);
    setFrom((chosen) => chosen ?? own.find((entry) => entry.rev < current.identity.rev)?.rev ?? null);
  }, [mount, path, current.identity.rev]);
  useEffect(() => {
    void load();
  }, [load]);

  const contentOf = useCallback(
    async (rev: number) => {
      if (rev === current.identity.rev) return current.content;
      const known = contents.current.get(rev);
      if (known !== undefined) return known;
      const answer = await loadDocument(mount, path, rev);
      if (!answer.ok) {
        setFailure(answer.failure);
        return null;
      }
      contents.current.set(rev, answer.data.content);
      return answer.data.content;
    },
    [current, mount, path],
  );

  const [pair, setPair] = useState<{ before: string; after: string } | null>(null);
  useEffect(() => {
    if (from === null) return setPair(null);
    let live = true;
    void Promise.all([contentOf(from), contentOf(to)]).then(([before, after]) => {
      if (live && before !== null && after !== null) setPair({ before, after });
    });
    return () => {
      live = false;
    };
  }, [from, to, contentOf]);

  const revs = entries?.map((entry) => entry.rev) ?? [];
  return (
    <section className="doc-history" aria-label="History" data-testid="history">
      <h2>History</h2>
      {failure ? <FailureNotice failure={failure} onRetry={() => void load()} /> : null}
      {entries === null ? <p className="muted">Loading the history…</p> : null}
      <ol className="timeline">
        {entries?.map((entry) => (
          <li key={entry.seq} data-testid="history-entry" className={entry.rev === current.identity.rev ? "current" : undefined}>
            <span className="rev">rev {entry.rev}</span> <span className="op">{entry.op}</span>{" "}
            <span className="who">
              {entry.actor} · {entry.source}
            </span>{" "}
            <time dateTime={entry.at}>{when(entry.at)}</time>
            {entry.from_path ? <span className="muted"> (from {entry.from_path})</span> : null}
            <span className="timeline-actions">
              {entry.rev !== current.identity.rev ? (
                <button type="button" onClick={() => [setFrom(entry.rev), setTo(current.identity.rev)]}>
                  Compare with now
                </button>
              ) : null}
              {entry.rev !== current.identity.rev && canWrite ? (
                confirming === entry.rev ? (
                  <>
                    <button
                      type="button"
                      className="primary"
                      onClick={() => {
                        setConfirming(null);
                        void contentOf(entry.rev).then((content) => content !== null && onRestore(content, entry.rev));
                      }}
                    >
                      Restore rev {entry.rev} as a new revision
                    </button>
                    <button type="button" onClick={() => setConfirming(null)}>
                      Cancel
                    </button>
                  </>
                ) : (
                  <button type="button" onClick={() => setConfirming(entry.rev)}>
                    Restore…
                  </button>
                )
              ) : null}
            </span>
          </li>
        ))}
      </ol>
      {revs.length > 1 ? (
        <div className="diff-pick">
          <RevisionPicker label="From" name="From revision" revs={revs} value={from} onChange={setFrom} />
          <RevisionPicker label="to" name="To revision" revs={revs} value={to} onChange={setTo} />
        </div>
      ) : null}
      {pair && from !== null ? <DiffView before={pair.before} after={pair.after} label={`rev ${from} → rev ${to}`} /> : null}
    </section>
  );
}
