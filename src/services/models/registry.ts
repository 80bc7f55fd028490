import { config, type ConfiguredModel } from "../../lib/config";
import type { Env } from "../../env";

/**
 * The model registry: which models exist, whether they are usable now, and
 * their prices in credits per 1,000 tokens. Metering reads prices only from
 * here, so a model's price is configured in exactly one place.
 */
export const LOCAL_MODEL_ID = "local-extractive";

export interface ModelPricing {
  input_per_1k: number;
  output_per_1k: number;
}

export interface ModelInfo {
  id: string;
  display_name: string;
  provider: "local" | "openai";
  /** The model name sent upstream (provider models). */
  upstream_model: string;
  context_window: number;
  available: boolean;
  pricing: ModelPricing;
}

const LOCAL_DEFAULT: ModelInfo = {
  id: LOCAL_MODEL_ID,
  display_name: "Local extractive (offline; quotes and cites the most relevant passages, no generation)",
  provider: "local",
  upstream_model: LOCAL_MODEL_ID,
  context_window: 8_192,
  available: true,
  pricing: { input_per_1k: 1, output_per_1k: 1 },
};

/** Used when OPENAI_API_KEY is set but MODELS is not. Prices are credits per 1,000 tokens. */
const DEFAULT_PROVIDER_MODELS: ConfiguredModel[] = [
  {
    id: "gpt-4o-mini",
    display_name: "GPT-4o mini",
    provider: "openai",
    context_window: 128_000,
    pricing: { input_per_1k: 0.15, output_per_1k: 0.6 },
  },
];

export function listModels(env: Env): ModelInfo[] {
  const { openaiApiKey, configured: models } = config(env).models;
  const hasKey = Boolean(openaiApiKey);
  const configured = models ?? (hasKey ? DEFAULT_PROVIDER_MODELS : []);
  const local = { ...LOCAL_DEFAULT };
  const out: ModelInfo[] = [];
  for (const m of configured) {
    if (m.id === LOCAL_MODEL_ID || m.provider === "local") {
      // A MODELS entry for local-extractive overrides its name and price.
      if (m.id === LOCAL_MODEL_ID) {
        local.pricing = m.pricing;
        if (m.display_name) local.display_name = m.display_name;
      }
      continue;
    }
    out.push({
      id: m.id,
      display_name: m.display_name ?? m.id,
      provider: "openai",
      upstream_model: m.upstream_model ?? m.id,
      context_window: m.context_window,
      available: hasKey,
      pricing: m.pricing,
    });
  }
  return [local, ...out];
}

export function getModel(env: Env, id: string): ModelInfo | undefined {
  return listModels(env).find((m) => m.id === id);
}

/**
 * The charge for a call in micro-credits: tokens / 1000 * price-per-1k, i.e.
 * tokens * price * 1000 micro-credits. Rounded up so no non-zero usage is free.
 */
export function priceMicro(pricing: ModelPricing, usage: { input_tokens: number; output_tokens: number }): number {
  const micro = usage.input_tokens * pricing.input_per_1k * 1000 + usage.output_tokens * pricing.output_per_1k * 1000;
  return micro <= 0 ? 0 : Math.ceil(micro - 1e-9);
}
