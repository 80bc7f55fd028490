import type { Env } from "../env";
import { MAX_PBKDF2_ITERATIONS } from "./crypto";

/** Parsed configuration with the defaults documented in README.md. */
function int(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) ? n : fallback;
}

export function isProduction(env: Env): boolean {
  return (env.ENVIRONMENT ?? "development") === "production";
}

export function config(env: Env) {
  return {
    environment: env.ENVIRONMENT ?? "development",
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? "http://localhost:8787").replace(/\/+$/, ""),
    allowedOrigins: (env.ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((s) => s.trim().replace(/\/+$/, ""))
      .filter(Boolean),
    startingCredits: int(env.STARTING_CREDITS, 1000),
    startingTenantCredits: int(env.STARTING_TENANT_CREDITS, 500),
    loginThrottleMax: int(env.LOGIN_THROTTLE_MAX, 10),
    loginThrottleWindowSeconds: int(env.LOGIN_THROTTLE_WINDOW_SECONDS, 900),
    signupThrottleMax: int(env.SIGNUP_THROTTLE_MAX, 30),
    signupThrottleWindowSeconds: int(env.SIGNUP_THROTTLE_WINDOW_SECONDS, 3600),
    passwordIterations: int(env.PASSWORD_ITERATIONS, MAX_PBKDF2_ITERATIONS),
  };
}
