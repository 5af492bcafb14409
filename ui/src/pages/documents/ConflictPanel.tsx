// Someone saved first: what they changed, what the person changed, and the
// ways on from here. Nothing here drops the person's text until they choose.
import { useMemo } from "react";
import { DiffView } from "./DiffView";
import type { Loaded } from "./docsApi";
import { mergeThreeWay } from "./merge";

export interface Conflict {
  base: Loaded;
  theirs: Loaded;
  /** The whole document as the person's edit makes it. */
  mine: string;
}

interface Props {
  conflict: Conflict;
  busy: boolean;
  /** Save this text on the new revision, as a new intent. */
  onApply: (text: string) => void;
  onEditByHand: (text: string) => void;
  onDiscard: () => void;
}

export function ConflictPanel({ conflict, busy, onApply, onEditByHand, onDiscard }: Props) {
  const { base, theirs, mine } = conflict;
  const { merge, mineText } = useMemo(() => {
    const kept = mergeThreeWay(base.content, mine, theirs.content, "mine");
    return { merge: mergeThreeWay(base.content, mine, theirs.content), mineText: kept.clean ? kept.text : mine };
  }, [base.content, mine, theirs.content]);
  return (
    <section className="conflict" role="alert" aria-label="Conflict" data-testid="conflict">
      <h2>Someone else saved first</h2>
      <p>
        You started from rev {base.identity.rev}; the document is now at rev {theirs.identity.rev}. Your text is kept
        in this browser until you choose.
      </p>
      {merge.clean ? (
        <p data-testid="conflict-kind">Their change touched other sections than yours: your edit applies on top of it.</p>
      ) : (
        <p data-testid="conflict-kind">Both of you changed the same part ({merge.reason}): choose which to keep, or merge by hand.</p>
      )}
      <div className="conflict-actions">
        {merge.clean ? (
          <button type="button" className="primary" disabled={busy} onClick={() => onApply(merge.text)}>
            Re-apply my edit on rev {theirs.identity.rev}
          </button>
        ) : (
          <>
            <button type="button" className="primary" disabled={busy} onClick={() => onApply(mineText)}>
              Keep mine
            </button>
            <button type="button" disabled={busy} onClick={onDiscard}>
              Keep theirs
            </button>
          </>
        )}
        <button type="button" disabled={busy} onClick={() => onEditByHand(merge.clean ? merge.text : mineText)}>
          Merge by hand
        </button>
        {merge.clean ? (
          <button type="button" className="quiet" disabled={busy} onClick={onDiscard}>
            Discard my edit
          </button>
        ) : null}
      </div>
      <div className="conflict-diffs">
        <DiffView before={base.content} after={theirs.content} label="Their change since you started" />
        <DiffView before={base.content} after={mine} label="Your edit" />
      </div>
    </section>
  );
}
