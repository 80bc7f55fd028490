import type { Env } from "../env";

/**
 * Queue consumers by queue name (one Worker consumes every queue). Capabilities
 * register their consumer; a batch from an unknown queue is retried rather
 * than dropped, so a misconfiguration loses nothing.
 */
export type QueueConsumer = (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void>;

const consumers = new Map<string, QueueConsumer>();

export function registerQueueConsumer(queueNamePrefix: string, consumer: QueueConsumer) {
  consumers.set(queueNamePrefix, consumer);
}

export async function dispatchQueue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  // Queue names may carry an environment suffix in production (kb-ingest-prod), so match by prefix.
  for (const [prefix, consumer] of consumers) {
    if (batch.queue === prefix || batch.queue.startsWith(`${prefix}-`)) return consumer(batch, env, ctx);
  }
  console.error(`no consumer registered for queue '${batch.queue}'; retrying ${batch.messages.length} message(s)`);
  batch.retryAll({ delaySeconds: 60 });
}
