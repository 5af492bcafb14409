// The Documents page: /documents/<mount>/<path>#<anchor>. The sidebar lists
// the mounts and one mount's tree; the main pane shows one document.
import { useCallback, useEffect, useState } from "react";
import type { Failure } from "../../api/client";
import { FailureNotice } from "../../components/FailureNotice";
import { revisionOf, useLive, useOnNewRevision } from "../../live";
import { navigate } from "../../router";
import { CreateForm } from "./DocActions";
import { DocSidebar } from "./DocSidebar";
import { DocumentView } from "./DocumentView";
import { type AuditReport, type DocEntry, type MountInfo, loadAudit, loadListing, loadMounts, loadRepoRoot } from "./docsApi";
import { documentHref } from "../../links";

/** `/documents/handbook/guides/setup.md` → {mount: "handbook", path: "guides/setup.md"}. */
function placeOf(pathname: string): { mount: string | null; path: string | null } {
  const rest = pathname.replace(/^\/documents\/?/, "");
  if (!rest) return { mount: null, path: null };
  const [mount, ...parts] = rest.split("/").map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const path = parts.filter(Boolean).join("/");
  return { mount: mount ?? null, path: path || null };
}

export function DocumentsPage({ pathname }: { pathname: string }) {
  const live = useLive();
  const docsRevision = revisionOf(live, "docs");
  const place = placeOf(pathname);
  const [mounts, setMounts] = useState<MountInfo[] | null>(null);
  const [mountsFailure, setMountsFailure] = useState<Failure | null>(null);
  const [repoRoot, setRepoRoot] = useState<string | null>(null);
  const [listing, setListing] = useState<{ mount: string; documents: DocEntry[]; total: number } | null>(null);
  const [listingFailure, setListingFailure] = useState<Failure | null>(null);
  const [audit, setAudit] = useState<AuditReport | null>(null);
  const [auditFailure, setAuditFailure] = useState<Failure | null>(null);
  const [creating, setCreating] = useState(false);

  const reloadMounts = useCallback(async () => {
    const answer = await loadMounts();
    if (answer.ok) [setMounts(answer.data.mounts), setMountsFailure(null)];
    else setMountsFailure(answer.failure);
  }, []);
  useEffect(() => {
    void reloadMounts();
    void loadRepoRoot().then((answer) => answer.ok && setRepoRoot(answer.data.repo_root));
  }, [reloadMounts]);

  const mountKey = place.mount ?? mounts?.[0]?.key ?? null;
  const mount = mounts?.find((m) => m.key === mountKey) ?? null;

  const reloadListing = useCallback(async () => {
    if (!mountKey) return;
    const answer = await loadListing(mountKey);
    if (answer.ok) [setListing({ mount: mountKey, ...answer.data }), setListingFailure(null)];
    else setListingFailure(answer.failure);
  }, [mountKey]);
  useEffect(() => {
    void reloadListing();
  }, [reloadListing]);
  useOnNewRevision(docsRevision, () => void reloadListing());

  const runAudit = useCallback(async () => {
    const answer = await loadAudit();
    if (answer.ok) [setAudit(answer.data), setAuditFailure(null)];
    else setAuditFailure(answer.failure);
  }, []);
  useEffect(() => {
    void runAudit();
  }, [runAudit]);

  if (mountsFailure) return <FailureNotice failure={mountsFailure} onRetry={() => void reloadMounts()} />;
  if (!mounts) return <p className="muted">Loading the mounts…</p>;
  if (mounts.length === 0) return <p className="placeholder">No mounts are declared: add some to docs.toml in the hub's state folder.</p>;
  if (!mount) {
    return (
      <div className="documents-page">
        <p className="notice" role="alert">
          There is no mount with the key <code>{place.mount}</code>. The mounts are {mounts.map((m) => m.key).join(", ")}.
        </p>
      </div>
    );
  }

  const documents = listing?.mount === mount.key ? listing.documents : null;
  const entry = documents?.find((d) => d.path === place.path) ?? null;
  const folder = place.path?.includes("/") ? place.path.slice(0, place.path.lastIndexOf("/")) : "";
  return (
    <div className="documents-page">
      <DocSidebar
        mounts={mounts}
        mount={mount.key}
        documents={documents}
        total={listing?.total ?? 0}
        listingFailure={listingFailure}
        onRetryListing={() => void reloadListing()}
        selected={place.path}
        audit={audit}
        auditFailure={auditFailure}
        onAudit={() => void runAudit()}
        onCreate={() => setCreating(true)}
      />
      <section className="doc-main">
        {audit?.writes_refused ? (
          <p className="notice notice-integrity" role="alert" data-testid="integrity-alarm">
            <strong>Writes are refused until the history is repaired.</strong> The documents' hash-chained history failed its
            audit; reading still works, and nothing you type here is lost.
          </p>
        ) : null}
        {creating ? (
          <CreateForm
            mount={mount.key}
            folder={folder}
            onCancel={() => setCreating(false)}
            onCreated={(path) => {
              setCreating(false);
              void reloadListing();
              navigate(documentHref(mount.key, path));
            }}
          />
        ) : null}
        {place.path ? (
          <DocumentView
            key={`${mount.key}/${place.path}`}
            mount={mount}
            path={place.path}
            entry={entry}
            repoRoot={repoRoot}
            docsRevision={docsRevision}
          />
        ) : (
          <div className="placeholder">
            <h1>{mount.name}</h1>
            <p>
              Choose a document on the left, or make a new one. People {mount.people === "read_only" ? "may only read" : "may edit"} this
              mount; agents {mount.agents === "read_only" ? "may only read it" : "may edit it too"}.
            </p>
          </div>
        )}
      </section>
    </div>
  );
}
