// The one place a failure is explained to a person, driven by the envelope's category.
import { useEffect, useState } from "react";
import { type Failure, moduleOf } from "../api/client";
import { navigate } from "../router";

interface Props {
  failure: Failure;
  /** Try the same call again (retryable errors). */
  onRetry?: () => void;
  /** Reload fresh state so the person can re-apply (conflicts). */
  onReload?: () => void;
  onDismiss?: () => void;
}

export function FailureNotice({ failure, onRetry, onReload, onDismiss }: Props) {
  const { error } = failure;
  const [wait, setWait] = useState(failure.retryAfter ?? 0);
  useEffect(() => {
    setWait(failure.retryAfter ?? 0);
  }, [failure]);
  useEffect(() => {
    if (wait <= 0) return;
    const timer = window.setTimeout(() => setWait((seconds) => seconds - 1), 1000);
    return () => window.clearTimeout(timer);
  }, [wait]);

  const module = moduleOf(failure);
  return (
    <div className={`notice notice-${error.category}`} role="alert" data-testid="failure" data-code={error.code}>
      <p className="notice-message">{error.message}</p>
      {error.error_id ? <p className="notice-meta">error id {error.error_id}</p> : null}
      <div className="notice-actions">
        {error.category === "conflict" && onReload ? (
          <button type="button" onClick={onReload}>
            Load the latest and re-apply
          </button>
        ) : null}
        {error.retryable && onRetry ? (
          <button type="button" onClick={onRetry} disabled={wait > 0}>
            {wait > 0 ? `Retry in ${wait}s` : "Retry"}
          </button>
        ) : null}
        {error.category === "module_disabled" ? (
          <button type="button" onClick={() => navigate("/settings")}>
            Enable {module ?? "the module"} in Settings
          </button>
        ) : null}
        {onDismiss ? (
          <button type="button" className="quiet" onClick={onDismiss} aria-label="Dismiss">
            ×
          </button>
        ) : null}
      </div>
    </div>
  );
}
