import type { Env } from "../env";
import { config } from "../lib/config";

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing email is pluggable. With EMAIL_WEBHOOK_URL set, messages are POSTed
 * there as JSON (point it at your mail relay); otherwise they are logged, which
 * is what development and tests use.
 */
export async function sendEmail(env: Env, msg: EmailMessage): Promise<void> {
  const webhook = config(env).emailWebhookUrl;
  if (webhook) {
    const res = await fetch(webhook, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(msg),
    });
    if (!res.ok) console.error(`email webhook answered ${res.status} for ${msg.to}`);
    return;
  }
  console.log(`[email] to=${msg.to} subject=${JSON.stringify(msg.subject)} body=${JSON.stringify(msg.text)}`);
}
