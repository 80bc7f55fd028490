import type { Stage } from "./upload";

const STEPS: { stage: Stage; label: string }[] = [
  { stage: "uploading", label: "Uploading" },
  { stage: "queued", label: "Queued" },
  { stage: "processing", label: "Processing" },
  { stage: "processed", label: "Processed" },
];

export function stageOf(status: string | undefined): Stage {
  if (status === "queued" || status === "processing" || status === "processed" || status === "failed") return status;
  return "uploading";
}

const WORDS: Record<Stage, string> = {
  uploading: "Uploading",
  queued: "Queued",
  processing: "Processing",
  processed: "Processed",
  failed: "Failed",
};

/**
 * Where a file is: uploading (with the share of bytes sent) → queued → processing → processed, or failed
 * (at the upload when `uploaded` is false, else while processing).
 */
export function Stages({ name, stage, sent, uploaded = true }: { name: string; stage: Stage; sent?: number; uploaded?: boolean }) {
  const failedAt = stage === "failed" ? (uploaded ? 3 : 0) : -1;
  const at = stage === "failed" ? failedAt : STEPS.findIndex((s) => s.stage === stage);
  return (
    <div className="stages-wrap" data-stage={stage} aria-label={`${name}: ${WORDS[stage].toLowerCase()}`} role="group">
      <ol className="stages">
        {STEPS.map((s, i) => {
          const state = i === failedAt ? "failed" : i < at || stage === "processed" ? "done" : i === at ? "current" : "";
          return (
            <li key={s.stage} className={state}>
              {i === failedAt ? (i === 0 ? "Upload failed" : "Failed") : s.label}
            </li>
          );
        })}
      </ol>
      {stage === "uploading" && sent !== undefined && (
        <progress max={1} value={sent} aria-label={`Upload of ${name}`}>
          {Math.round(sent * 100)}%
        </progress>
      )}
    </div>
  );
}

const TONE: Record<Stage, string> = { uploading: "busy", queued: "busy", processing: "busy", processed: "good", failed: "bad" };

/** The same, in one word (the documents table). */
export function StageBadge({ name, stage }: { name: string; stage: Stage }) {
  const busy = stage !== "processed" && stage !== "failed";
  return (
    <span className={`badge badge-${TONE[stage]}`} data-stage={stage} aria-label={`${name}: ${WORDS[stage].toLowerCase()}`}>
      {WORDS[stage]}
      {busy ? "…" : ""}
    </span>
  );
}
