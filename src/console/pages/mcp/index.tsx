import { PageHeader } from "../../ui/ui";
import { KbMcpEndpoint } from "./endpoint";
import { McpServerList } from "./servers";
import "../agents/agents.css";

/** MCP both ways: servers the chats and agents use, and this service's own endpoint for MCP clients. */
export function McpServers({ orgId }: { orgId: string }) {
  return (
    <>
      <PageHeader title="MCP servers" />
      <McpServerList orgId={orgId} />
      <KbMcpEndpoint orgId={orgId} />
    </>
  );
}
