// A refused or failed write, in words with its way out; "Check the receipt"
// asks the hub what became of the request ID.
import { useState } from "react";
import type { Failure } from "../../api/client";
import type { Receipt } from "./docsApi";
import { explain } from "./refusals";
import { checkReceipt } from "./saving";

interface Props {
  failure: Failure;
  requestId: string;
  /** Send the same intent again (same request ID). */
  onRetry?: () => void;
  /** Give up on this request ID and send the edit as a new intent. */
  onNewIntent?: () => void;
  /** The receipt says it committed after all. */
  onCommitted?: (receipt: Receipt) => void;
}

export function DocFailure({ failure, requestId, onRetry, onNewIntent, onCommitted }: Props) {
  const { headline, recovery } = explain(failure);
  const [receipt, setReceipt] = useState<Receipt | null>(null);
  const [receiptFailure, setReceiptFailure] = useState<string | null>(null);
  const code = failure.error.code;
  const uncertain = code === "COMMIT_UNKNOWN" || code === "E_REQUEST_REUSE" || code === "E_NETWORK" || failure.status >= 500;
  return (
    <div className={`notice notice-${failure.error.category}`} role="alert" data-testid="doc-failure" data-code={code}>
      <p className="notice-message">
        <strong>{headline}</strong> {recovery}
      </p>
      {headline !== failure.error.message ? <p className="notice-meta">The hub said: {failure.error.message}</p> : null}
      {receipt ? (
        <p className="notice-meta" data-testid="receipt">
          Receipt for {receipt.request_id}: <strong>{receipt.state.replace("_", " ")}</strong>. {receipt.advice}
        </p>
      ) : null}
      {receiptFailure ? <p className="notice-meta">{receiptFailure}</p> : null}
      <div className="notice-actions">
        {uncertain ? (
          <button
            type="button"
            onClick={async () => {
              const checked = await checkReceipt(requestId);
              setReceipt(checked.receipt);
              setReceiptFailure(checked.failure ? checked.failure.error.message : null);
              if (checked.receipt?.state === "committed" && onCommitted) onCommitted(checked.receipt);
            }}
          >
            Check the receipt
          </button>
        ) : null}
        {onRetry && (failure.error.retryable || code === "COMMIT_UNKNOWN" || code === "E_NETWORK") ? (
          <button type="button" onClick={onRetry}>
            Retry (same request ID)
          </button>
        ) : null}
        {onNewIntent && code === "E_REQUEST_REUSE" ? (
          <button type="button" onClick={onNewIntent}>
            Save as a new change
          </button>
        ) : null}
      </div>
    </div>
  );
}
