/**
 * Which hosts the URL guard refuses before any DNS (see url-guard.ts): every IPv4 spelling and IPv6
 * form of private, loopback, link-local, CGNAT, multicast, reserved, documentation and unspecified
 * addresses, cloud metadata included, and local or internal names.
 */

/** Parses every IPv4 spelling inet_aton accepts (1-4 parts, decimal, octal 0.., hex 0x..); null if not IPv4. */
export function parseIPv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length === 0 || parts.length > 4 || parts.some((p) => p === "")) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isFinite(n)) return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return null;
  let value = 0;
  nums.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return value + last;
}

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
const BLOCKED_V4: Array<[number, number, string]> = [
  [v4(0, 0, 0, 0), 8, "unspecified/this-network"],
  [v4(10, 0, 0, 0), 8, "private"],
  [v4(100, 64, 0, 0), 10, "carrier-grade NAT"],
  [v4(127, 0, 0, 0), 8, "loopback"],
  [v4(169, 254, 0, 0), 16, "link-local / cloud metadata"],
  [v4(172, 16, 0, 0), 12, "private"],
  [v4(192, 0, 0, 0), 24, "IETF protocol assignments"],
  [v4(192, 0, 2, 0), 24, "documentation"],
  [v4(192, 88, 99, 0), 24, "6to4 relay"],
  [v4(192, 168, 0, 0), 16, "private"],
  [v4(198, 18, 0, 0), 15, "benchmarking"],
  [v4(198, 51, 100, 0), 24, "documentation"],
  [v4(203, 0, 113, 0), 24, "documentation"],
  [v4(224, 0, 0, 0), 4, "multicast"],
  [v4(240, 0, 0, 0), 4, "reserved/broadcast"],
];

/** Why an IPv4 address is not public, or null when it is. */
export function blockedIPv4(addr: number): string | null {
  for (const [net, bits, why] of BLOCKED_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((addr & mask) >>> 0) === net) return why;
  }
  return null;
}

/** Parses an IPv6 address (no brackets, optional zone) into 8 groups; null if invalid. */
export function parseIPv6(host: string): number[] | null {
  let s = host.replace(/^\[|\]$/g, "").split("%")[0].toLowerCase();
  if (!s.includes(":")) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  const last = s.slice(lastColon + 1);
  if (last.includes(".")) {
    // Embedded IPv4 in the last 32 bits (::ffff:1.2.3.4, 64:ff9b::1.2.3.4).
    const n = last.split(".").length === 4 ? parseIPv4(last) : null;
    if (n === null) return null;
    tail = [n >>> 16, n & 0xffff];
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith("::")) s = s.slice(0, -1);
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if ([...head, ...rest].some((g) => Number.isNaN(g))) return null;
  const fill = 8 - head.length - rest.length - tail.length;
  if (halves.length === 2 ? fill < 0 : fill !== 0) return null;
  return [...head, ...new Array(Math.max(0, fill)).fill(0), ...rest, ...tail];
}

/** Why an IPv6 address is not public, or null when it is. */
export function blockedIPv6(g: number[]): string | null {
  const embedded = (hi: number, lo: number) => blockedIPv4(((hi << 16) >>> 0) + lo);
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return embedded(g[6], g[7]) ?? null; // IPv4-mapped
  if (g.slice(0, 6).every((x) => x === 0)) return embedded(g[6], g[7]) ?? "IPv4-compatible"; // deprecated ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6], g[7]); // NAT64
  if (g[0] === 0x2002) return embedded(g[1], g[2]); // 6to4
  if ((g[0] & 0xfe00) === 0xfc00) return "unique local (private)";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "site-local";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "documentation";
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return "discard";
  return null;
}

const BLOCKED_NAMES = [/^localhost$/, /\.localhost$/, /\.local$/, /\.internal$/, /^metadata$/, /^instance-data$/, /\.home\.arpa$/];

/** Why a URL's host is not allowed (without DNS), or null. */
export function blockedHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (!host) return "no host";
  if (host.startsWith("[")) {
    const g = parseIPv6(host);
    return g ? blockedIPv6(g) : "an invalid IPv6 address";
  }
  const n = parseIPv4(host);
  if (n !== null) return blockedIPv4(n);
  if (BLOCKED_NAMES.some((re) => re.test(host))) return "a local or internal name";
  if (!host.includes(".")) return "a single-label (intranet) name";
  return null;
}
