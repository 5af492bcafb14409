// The shortest path between two nodes, named by uid, path or symbol name.
import { type FormEvent, useState } from "react";
import { api, call, type Failure, type Schemas } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";

interface Props {
  from: string;
  to: string;
  onChange: (end: "from" | "to", value: string) => void;
  onFound: (uids: string[]) => void;
  onSelect: (uid: string) => void;
}

export function PathFinder({ from, to, onChange, onFound, onSelect }: Props) {
  const [answer, setAnswer] = useState<Schemas["PathAnswer"] | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);

  const find = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    const result = await call(() =>
      api.POST("/api/graph/path", { body: { source: from, target: to, max_hops: 8 } }),
    );
    setBusy(false);
    if (!result.ok) {
      setFailure(result.failure);
      setAnswer(null);
      onFound([]);
      return;
    }
    setFailure(null);
    setAnswer(result.data);
    onFound(result.data.path.map((step) => step.node.uid));
  };

  return (
    <section className="path-finder" aria-labelledby="path-title">
      <h2 id="path-title">Path finder</h2>
      <form onSubmit={(event) => void find(event)}>
        <label>
          From
          <input value={from} onChange={(e) => onChange("from", e.target.value)} placeholder="uid, path or name" required />
        </label>
        <label>
          To
          <input value={to} onChange={(e) => onChange("to", e.target.value)} placeholder="uid, path or name" required />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          Find path
        </button>
      </form>
      {failure ? <FailureNotice failure={failure} /> : null}
      {answer && !answer.found ? <p data-testid="path-result">No path within 8 hops.</p> : null}
      {answer?.found ? (
        <ol className="path-steps" data-testid="path-result">
          {answer.path.map((step) => (
            <li key={step.node.uid}>
              {step.edge ? (
                <span className="edge-label">
                  {step.forward ? "→" : "←"} {step.edge}
                </span>
              ) : null}
              <button type="button" className="node-link" onClick={() => onSelect(step.node.uid)} title={step.node.uid}>
                {step.node.label} <span className="node-kind">{step.node.kind}</span>
              </button>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
