// The documents area's calls, on the generated client. A write carries its
// base as If-Match and its intent's key as Idempotency-Key, so a retry of the
// same intent (same key) can never write twice.
import { api, call, type Result, type Schemas } from "../../api/client";

export type MountInfo = Schemas["MountInfo"];
export type DocEntry = Schemas["DocEntry"];
export type DocPage = Schemas["DocPage"];
export type Identity = Schemas["Identity"];
export type Receipt = Schemas["Receipt"];
export type Section = Schemas["Section"];
export type DocHistoryEntry = Schemas["DocHistoryEntry"];
export type AuditReport = Schemas["AuditReport"];
export type Operation = Schemas["Operation"];

/** The most documents one mount's tree lists. */
const MAX_LISTED = 5000;
/** The API's largest listing page: each page walks the mount for outside edits. */
const LISTING_PAGE = 1000;

export interface Loaded {
  identity: Identity;
  content: string;
  outline: Section[];
}

export function etagOf(identity: { rev: number; hash: string }): string {
  return `"${identity.rev}-${identity.hash}"`;
}

/** A fresh key per intent; crypto.randomUUID needs a secure context, so fall back. */
export function newRequestId(): string {
  if (typeof crypto.randomUUID === "function") return `ui-${crypto.randomUUID()}`;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export const loadMounts = () => call(() => api.GET("/api/docs/mounts"));

export const loadRepoRoot = () => call(() => api.GET("/api/health"));

/** Every document of a mount, following the cursor up to MAX_LISTED. */
export async function loadListing(mount: string): Promise<Result<{ documents: DocEntry[]; total: number }>> {
  const documents: DocEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await call(() =>
      api.GET("/api/docs/list", { params: { query: { mount, limit: LISTING_PAGE, ...(cursor ? { cursor } : {}) } } }),
    );
    if (!page.ok) return page;
    documents.push(...page.data.documents);
    cursor = page.data.next_cursor ?? undefined;
    if (!cursor || documents.length >= MAX_LISTED) return { ok: true, data: { documents, total: page.data.total } };
  }
}

/** A whole document (or one of its past revisions), every page joined. */
export async function loadDocument(mount: string, path: string, rev?: number): Promise<Result<Loaded>> {
  let content = "";
  let first: DocPage | null = null;
  let cursor: string | undefined;
  for (;;) {
    const page = await call(() =>
      api.GET("/api/docs/document", {
        params: { query: { mount, path, ...(rev ? { rev } : {}), ...(cursor ? { cursor } : {}) } },
      }),
    );
    if (!page.ok) return page;
    first ??= page.data;
    content += page.data.content;
    cursor = page.data.next_cursor ?? undefined;
    if (!cursor) return { ok: true, data: { identity: first.document, content, outline: first.outline } };
  }
}

export interface Write {
  mount: string;
  path: string;
  base: { rev: number; hash: string };
  requestId: string;
  operations: Operation[];
}

export const patchDocument = (write: Write) =>
  call(() =>
    api.PATCH("/api/docs/document", {
      params: {
        query: { mount: write.mount, path: write.path },
        header: { "If-Match": etagOf(write.base), "Idempotency-Key": write.requestId },
      },
      body: { operations: write.operations },
    }),
  );

export const createDocument = (mount: string, path: string, content: string, requestId: string) =>
  call(() =>
    api.POST("/api/docs/documents", {
      params: { header: { "Idempotency-Key": requestId } },
      body: { mount, path, content },
    }),
  );

export const moveDocument = (mount: string, path: string, to: string, base: Identity, requestId: string) =>
  call(() =>
    api.POST("/api/docs/move", {
      params: { header: { "If-Match": etagOf(base), "Idempotency-Key": requestId } },
      body: { mount, path, to },
    }),
  );

export const deleteDocument = (mount: string, path: string, base: Identity, requestId: string) =>
  call(() =>
    api.DELETE("/api/docs/document", {
      params: { query: { mount, path }, header: { "If-Match": etagOf(base), "Idempotency-Key": requestId } },
    }),
  );

export const loadHistory = (mount: string, path: string) =>
  call(() => api.GET("/api/docs/history", { params: { query: { mount, path, limit: 200 } } }));

export const loadAudit = () => call(() => api.GET("/api/docs/audit"));

export const loadReceipt = (requestId: string) =>
  call(() => api.GET("/api/docs/receipts/{request_id}", { params: { path: { request_id: requestId } } }));
