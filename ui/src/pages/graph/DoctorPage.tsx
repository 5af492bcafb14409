// The graph's health by category, with samples, and fixing the fixable ones.
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";

type FixableCategory = NonNullable<Schemas["DoctorInput"]["categories"]>[number];
import { useLoaded } from "../../api/useLoaded";
import { FailureNotice } from "../../components/FailureNotice";
import { useOnNewRevision } from "../../live";

const diagnose = () => call(() => api.POST("/api/graph/doctor", { body: { fix: false } }));

export function DoctorPage({ revision }: { revision: number | null }) {
  const { data: doctor, failure, setFailure, reload: load } = useLoaded(diagnose);
  useOnNewRevision(revision, () => void load());
  const [fixed, setFixed] = useState<string | null>(null);

  // offered only where the hub says the category is fixable
  const fix = async (category: FixableCategory) => {
    const result = await call(() => api.POST("/api/graph/doctor", { body: { fix: true, categories: [category] } }));
    if (!result.ok) return setFailure(result.failure);
    setFixed(`${category}: removed ${result.data.stats.fixed}`);
    await load();
  };

  return (
    <section className="doctor" aria-labelledby="doctor-title">
      <h2 id="doctor-title">Graph doctor</h2>
      {failure ? <FailureNotice failure={failure} onRetry={() => void load()} /> : null}
      {doctor ? (
        <p data-testid="doctor-summary" className={doctor.healthy ? "healthy" : "unhealthy"}>
          {doctor.healthy ? "Healthy" : `${doctor.stats.issue_count} categories need attention`} ·{" "}
          {doctor.stats.nodes.toLocaleString()} nodes, {doctor.stats.edges.toLocaleString()} edges
        </p>
      ) : null}
      {fixed ? <p role="status">Fixed {fixed}.</p> : null}
      <table className="doctor-table">
        <thead>
          <tr>
            <th>Category</th>
            <th>Severity</th>
            <th>Count</th>
            <th>Samples</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(doctor?.issues ?? []).map((issue) => (
            <tr key={issue.category} data-testid={`doctor-${issue.category}`}>
              <td>{issue.category.replaceAll("_", " ")}</td>
              <td>{issue.severity}</td>
              <td className="count">{issue.count}</td>
              <td>
                <ul className="samples">
                  {issue.sample.map((sample) => (
                    <li key={sample}>{sample}</li>
                  ))}
                </ul>
              </td>
              <td>
                {issue.fixable ? (
                  <button type="button" disabled={issue.count === 0} onClick={() => void fix(issue.category as FixableCategory)}>
                    Fix
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
