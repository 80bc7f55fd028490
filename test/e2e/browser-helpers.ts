import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Debian's Chromium for the browser tests: CHROMIUM_PATH or the usual paths, installed with apt-get when
 * missing and the user is root (never a downloaded browser build); null when neither is possible, and then
 * the browser tests skip, except under CI=true, where a missing browser fails them (never a silent skip).
 */
export function findChromium(): string | null {
  const found = locateChromium();
  if (!found && process.env.CI === "true") {
    throw new Error("CI=true and no Chromium: install Debian's `chromium` (.ci/run does) or set CHROMIUM_PATH");
  }
  return found;
}

function locateChromium(): string | null {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean) as string[];
  const found = candidates.find((p) => existsSync(p));
  if (found) return found;
  const canInstall = process.platform === "linux" && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");
  if (!canInstall) return null;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
  const r = spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "ignore", env });
  if (r.status !== 0 || !existsSync("/usr/bin/chromium")) throw new Error("apt-get install chromium failed");
  return "/usr/bin/chromium";
}

/** A TCP port that was free a moment ago, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
