import { memoryAfterTurn, memoryContext } from "../memory/turn";
import { connectorToolProvider } from "../connectors/provider";
import { kbSearchProvider } from "./builtin/kb-search";
import { skillsProvider } from "./builtin/skills";
import { webSearchProvider } from "./builtin/web-search";
import { sqlProvider } from "../tables/tool";
import type { AfterTurnHook, ContextProvider, ToolProvider } from "./types";
import { mcpToolProvider } from "../mcp/provider";
import { delegationProvider } from "../delegation/provider";
import { agentRunHook } from "../agents/hook";
// Registers the `a2a_` delegate resolver with the delegation provider (external A2A agents).
import "../a2a/delegate";

/**
 * Every tool provider, context provider and after-turn hook, one line each.
 * A new capability registers here and nowhere else; the turn pipeline reads
 * these lists (src/services/answer/).
 */
export const TOOL_PROVIDERS: ToolProvider[] = [
  kbSearchProvider,
  webSearchProvider,
  skillsProvider,
  sqlProvider,
  connectorToolProvider,
  delegationProvider,
];

export const CONTEXT_PROVIDERS: ContextProvider[] = [
  memoryContext,
];

export const AFTER_TURN_HOOKS: AfterTurnHook[] = [
  memoryAfterTurn,
  agentRunHook,
];

// MCP tool servers enabled for the chat (or the agent): mcp__<server>__<tool>.
TOOL_PROVIDERS.push(mcpToolProvider);
