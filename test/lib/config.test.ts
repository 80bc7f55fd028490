import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { checkedConfig, config, ConfigError } from "../../src/lib/config";

const problemsOf = (vars: Partial<Env>) => {
  try {
    checkedConfig({ ...env, ...vars } as Env);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
};

describe("configuration, parsed once", () => {
  it("is parsed once per env object: the same parsed object every time", () => {
    const vars = { ...env, MAX_TOOL_STEPS: "3" } as Env;
    expect(config(vars)).toBe(config(vars));
    expect(checkedConfig(vars)).toBe(config(vars));
    expect(config(vars).models.maxToolSteps).toBe(3);
    expect(config(env).models.configured?.map((m) => m.id)).toContain("test-gpt");
  });

  it("names the variable of a bad value", () => {
    expect(problemsOf({ MAX_TOOL_STEPS: "many" })).toMatch(/MAX_TOOL_STEPS must be a number \(got 'many'\)/);
    expect(problemsOf({ MODELS: "not json" })).toMatch(/MODELS must be JSON/);
    expect(problemsOf({ MODELS: JSON.stringify([{ id: "m" }]) })).toMatch(/MODELS must be a JSON array of models .*0\.pricing/);
    expect(problemsOf({ PUBLIC_BASE_URL: "example.com" })).toMatch(/PUBLIC_BASE_URL must be an http\(s\) URL/);
    expect(problemsOf({ VECTOR_INDEX: "pinecone" })).toMatch(/VECTOR_INDEX must be one of local, vectorize \(got 'pinecone'\)/);
    expect(problemsOf({ CONNECTORS: "[1" })).toMatch(/CONNECTORS must be JSON/);
    expect(problemsOf({ ENVIRONMENT: "prod" })).toMatch(/ENVIRONMENT must be one of development, test, production/);
    // Two bad values: both named.
    expect(problemsOf({ SSE_HEARTBEAT_MS: "soon", A2A_TIMEOUT_MS: "-1" })).toMatch(/SSE_HEARTBEAT_MS.*; A2A_TIMEOUT_MS must be more than 0/);
    expect(problemsOf({})).toBeNull();
  });

  it("a bad value fails at start-up: the app answers 503 naming it, and the accessors fall back", async () => {
    const bad = { ...env, MODELS: "[{" } as Env;
    const ctx = createExecutionContext();
    const res = await createApp().fetch(new Request("http://example.com/", { headers: { Accept: "application/json" } }), bad, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    const body = await res.json<{ error: { code: string; message: string } }>();
    expect(body.error.code).toBe("service_unavailable");
    expect(body.error.message).toMatch(/MODELS must be JSON/);
    expect(config(bad).models.configured).toBeNull();
  });
});
