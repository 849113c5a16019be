import type { McpTool } from './mcp-tool.js';
import { PROJECT_TOOLS } from './tools/projects-tools.js';
import { MEMBER_TOOLS } from './tools/members-tools.js';
import { WORKFLOW_TOOLS } from './tools/workflows-tools.js';
import { TASK_TOOLS } from './tools/tasks-tools.js';
import { WEBHOOK_TOOLS } from './tools/webhooks-tools.js';
import { RECORD_TOOLS } from './tools/records-tools.js';

/**
 * Every tool the MCP server knows (CONTRACT 17), grouped as the API is (one file per area in tools/). Each `run` is
 * the body of the /v1 route it mirrors: the same service, the same actor, the same shape; a list takes `limit` and
 * `cursor` and answers `{ data, next_cursor }`.
 */
export const MCP_TOOLS: readonly McpTool[] = [...PROJECT_TOOLS, ...MEMBER_TOOLS, ...WORKFLOW_TOOLS, ...TASK_TOOLS, ...WEBHOOK_TOOLS, ...RECORD_TOOLS];
