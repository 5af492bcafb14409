// Every call to the hub goes through this typed client; errors come back as
// typed ErrorEnvelopes, turned into one Failure shape the whole app handles.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Card = Schemas["Card"];
export type Task = Schemas["Task"];
export type Board = Schemas["Board"];
export type Column = Schemas["Column"];
export type Status = Schemas["Status"];
export type Kind = Schemas["Kind"];
export type Priority = Schemas["Priority"];
/** The hub's error body; `E_NETWORK` is the app's own code for a call that got no error body. */
export type ErrorBody = Omit<Schemas["ErrorBody"], "code"> & { code: Schemas["Code"] | "E_NETWORK" };
export type HistoryEntry = Schemas["HistoryEntry"];
export type ModuleInfo = Schemas["ModuleInfo"];
export type SessionSummary = Schemas["SessionSummary"];
export type EvidenceBundle = Schemas["EvidenceBundle"];

export const api = createClient<paths>({ baseUrl: "" });

/** A refused or failed call: the envelope's error plus what HTTP said. */
export interface Failure {
  error: ErrorBody;
  status: number;
  /** Seconds the server asked us to wait (503 Retry-After). */
  retryAfter?: number;
}

/** What a success says about itself (`meta`: the layer, a search's mode, ...). */
export type Meta = Record<string, unknown>;

export type Result<T> = { ok: true; data: T; meta?: Meta } | { ok: false; failure: Failure };

/** Unwraps an openapi-fetch answer: `data.data` (and its `meta`) on success, a Failure otherwise. */
export function unwrap<T>(
  answer: { data?: { data: T; meta?: unknown }; error?: { error: Schemas["ErrorBody"] }; response: Response },
): Result<T> {
  if (answer.data !== undefined) {
    const meta = answer.data.meta;
    return { ok: true, data: answer.data.data, meta: meta && typeof meta === "object" ? (meta as Meta) : {} };
  }
  const retry = answer.response.headers.get("Retry-After");
  const error: ErrorBody = answer.error?.error ?? {
    category: "internal",
    code: "E_NETWORK",
    retryable: true,
    message: `the hub answered ${answer.response.status} without an error body`,
  };
  return {
    ok: false,
    failure: { error, status: answer.response.status, ...(retry ? { retryAfter: Number(retry) } : {}) },
  };
}

/** Calls that never reached the hub become a retryable Failure too. */
export async function call<T>(
  request: () => Promise<{ data?: { data: T; meta?: unknown }; error?: { error: Schemas["ErrorBody"] }; response: Response }>,
): Promise<Result<T>> {
  try {
    return unwrap(await request());
  } catch (thrown) {
    return {
      ok: false,
      failure: {
        status: 0,
        error: {
          category: "transient",
          code: "E_NETWORK",
          retryable: true,
          message: `the hub could not be reached (${String(thrown)})`,
        },
      },
    };
  }
}

/** The field a validation error names, if any. */
export function fieldOf(failure: Failure): string | undefined {
  const details = failure.error.details as { field?: unknown } | null | undefined;
  return typeof details?.field === "string" ? details.field : undefined;
}

/** The module a module_disabled error names, if any. */
export function moduleOf(failure: Failure): string | undefined {
  const details = failure.error.details as { module?: unknown } | null | undefined;
  return typeof details?.module === "string" ? details.module : undefined;
}
