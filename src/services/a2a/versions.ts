import type { AgentCard } from "@a2a-js/sdk";

/**
 * Protocol versions at our agents' A2A endpoints (API-DECISIONS wave 3, "Protocols at the edge"), as
 * the A2A SDK's own servers decide them: the `A2A-Version` header names the version; without it a
 * client speaks 0.3 (the SDK's default for an absent header). A version is supported when one of the
 * card's interfaces declares it (the SDK's `validateVersion`); anything else is the protocol's
 * VersionNotSupportedError.
 */

export const A2A_VERSION_HEADER = "A2A-Version";

/** The version a request asks for: its header, or 0.3 when absent (as the SDK's servers read it). */
export async function requestedVersion(header: string | undefined): Promise<string> {
  const { A2A_LEGACY_PROTOCOL_VERSION } = await import("@a2a-js/sdk/compat/v0_3");
  return header?.trim() || A2A_LEGACY_PROTOCOL_VERSION;
}

/** Throws the SDK's VersionNotSupportedError unless the card offers `version` over JSON-RPC. */
export async function assertVersionSupported(card: AgentCard, version: string): Promise<void> {
  const { validateVersion } = await import("@a2a-js/sdk/server");
  validateVersion(version, card, "JSONRPC");
}

/**
 * The card as a client of `version` reads it: 1.0 → the card as it is; 0.3 → the SDK's 0.3 translation
 * (`toCompatAgentCard`, reached through its legacy REST handler, which applies it to the card it is
 * given) with the 1.0 interfaces embedded as `supportedInterfaces`, as the SDK's legacy card router
 * does (`embedV1Interfaces`), so a 1.0 client reading the 0.3 card still finds them.
 */
export async function cardForVersion(card: AgentCard, version: string): Promise<Record<string, unknown>> {
  await assertVersionSupported(card, version);
  const [{ AgentCard: AgentCardJson }, { A2A_LEGACY_PROTOCOL_VERSION }] = await Promise.all([import("@a2a-js/sdk"), import("@a2a-js/sdk/compat/v0_3")]);
  const v1 = AgentCardJson.toJSON(card) as Record<string, unknown>;
  if (version !== A2A_LEGACY_PROTOCOL_VERSION) return v1;
  const [{ LegacyRestTransportHandler }, { ServerCallContext }] = await Promise.all([import("@a2a-js/sdk/compat/v0_3/server"), import("@a2a-js/sdk/server")]);
  // Only the card method is called: the handler reads nothing else of the request handler.
  const cardOnly = { getAuthenticatedExtendedAgentCard: async () => card } as unknown as ConstructorParameters<typeof LegacyRestTransportHandler>[0];
  const legacy = (await new LegacyRestTransportHandler(cardOnly).getAuthenticatedExtendedAgentCard(new ServerCallContext())) as unknown as Record<string, unknown>;
  return { ...legacy, supportedInterfaces: v1.supportedInterfaces };
}
