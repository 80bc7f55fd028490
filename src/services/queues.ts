import type { ServiceContext } from "../contracts/context";

/**
 * Queue consumers by queue name (one Worker consumes every queue). Capabilities
 * register their consumer; a batch from an unknown queue is retried rather
 * than dropped, so a misconfiguration loses nothing.
 */
export type QueueConsumer = (ctx: ServiceContext, batch: MessageBatch<unknown>) => Promise<void>;

const consumers = new Map<string, QueueConsumer>();

export function registerQueueConsumer(queueNamePrefix: string, consumer: QueueConsumer) {
  consumers.set(queueNamePrefix, consumer);
}

/** One queue batch, with the context its entry point (src/index.ts) built for it. */
export async function dispatchQueue(ctx: ServiceContext, batch: MessageBatch<unknown>): Promise<void> {
  // Queue names may carry an environment suffix in production (kb-ingest-prod), so match by prefix.
  for (const [prefix, consumer] of consumers) {
    if (batch.queue === prefix || batch.queue.startsWith(`${prefix}-`)) return consumer(ctx, batch);
  }
  console.error(`no consumer registered for queue '${batch.queue}'; retrying ${batch.messages.length} message(s)`);
  batch.retryAll({ delaySeconds: 60 });
}
