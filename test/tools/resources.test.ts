import { describe, expect, it } from "vitest";
import { TurnResources } from "../../src/contracts/resources";

describe("TurnResources", () => {
  it("creates a value once per key, re-creates it after a failed creation or a drop, and closes everything at the end", async () => {
    const r = new TurnResources();
    const closed: string[] = [];
    let made = 0;
    const make = (name: string) => async () => `${name}#${++made}`;
    const close = async (v: string) => void closed.push(v);

    const [a, b] = await Promise.all([r.shared("a", make("a"), close), r.shared("a", make("a"), close)]);
    expect(a).toBe("a#1");
    expect(b).toBe("a#1");

    await expect(r.shared("broken", async () => Promise.reject(new Error("down")), close)).rejects.toThrow("down");
    expect(await r.shared("broken", make("broken"), close)).toBe("broken#2");

    await r.drop("a");
    expect(closed).toEqual(["a#1"]);
    expect(await r.shared("a", make("a"), close)).toBe("a#3");

    await r.closeAll();
    expect(closed.sort()).toEqual(["a#1", "a#3", "broken#2"]);
    expect(await r.shared("a", make("a"), close)).toBe("a#4");
  });
});
