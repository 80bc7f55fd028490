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
  uploading: "uploading",
  queued: "queued for processing",
  processing: "processing",
  processed: "processed",
  failed: "failed",
};

/** Where a file is: uploading (with the share of bytes sent) → queued → processing → processed, or failed. */
export function Stages({ name, stage, sent }: { name: string; stage: Stage; sent?: number }) {
  const at = stage === "failed" ? -1 : STEPS.findIndex((s) => s.stage === stage);
  return (
    <div className="stages-wrap" data-stage={stage} aria-label={`${name}: ${WORDS[stage]}`} role="group">
      <ol className="stages">
        {STEPS.map((s, i) => (
          <li key={s.stage} className={stage === "failed" ? "failed" : i < at || stage === "processed" ? "done" : i === at ? "current" : ""}>
            {s.label}
          </li>
        ))}
      </ol>
      {stage === "uploading" && sent !== undefined && (
        <progress max={1} value={sent} aria-label={`Upload of ${name}`}>
          {Math.round(sent * 100)}%
        </progress>
      )}
    </div>
  );
}
