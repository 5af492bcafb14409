// What each refusal of the documents contract means to a person, and what to do.
import type { Failure } from "../../api/client";

export interface Explained {
  headline: string;
  recovery: string;
}

export function explain(failure: Failure): Explained {
  const { code, message } = failure.error;
  switch (code) {
    case "E_READ_ONLY":
      return {
        headline: "This mount is read-only for people.",
        recovery: "You can read it and its history; edits need a mount marked writable in docs.toml.",
      };
    case "E_PATH":
      return {
        headline: "That path is not allowed here.",
        recovery: "Choose a path inside the mount that ends in .md or .markdown, without .. or a leading /.",
      };
    case "E_REQUEST_REUSE":
      return {
        headline: "This save's request ID already belongs to another change.",
        recovery: "Check the receipt to see what the first one did, then save again as a new change.",
      };
    case "COMMIT_UNKNOWN":
      return {
        headline: "The hub cannot tell whether this save landed.",
        recovery: "Check the receipt before doing anything else; saving again sends the same request ID, so it cannot write twice.",
      };
    case "E_INTEGRITY":
      return {
        headline: "Writes are refused until the history is repaired.",
        recovery: "The documents' hash-chained history failed its audit; reading still works. Your text stays here.",
      };
    case "STALE_REVISION":
      return {
        headline: "Someone changed this document since you started.",
        recovery: "Compare their change with yours and re-apply your edit on the new revision.",
      };
    case "E_NOT_FOUND":
      return { headline: "That document is not there (any more).", recovery: message };
    case "E_NETWORK":
      return {
        headline: "The hub could not be reached.",
        recovery: "Retry sends the same request ID, so a save that did land is not written twice.",
      };
    default:
      return { headline: message, recovery: failure.error.retryable ? "Try again in a moment." : "" };
  }
}
