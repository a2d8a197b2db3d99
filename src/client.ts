import { createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { AdminService } from './gen/admin/v1/admin_pb';
import { AgentService } from './gen/agent/v2/agent_pb';
import { AutomationService } from './gen/agent/v2/automation_pb';
import { AssistantService } from './gen/discovery/v2/assistant_pb';
import { SearchService } from './gen/discovery/v1/search_pb';

export { AdminService } from './gen/admin/v1/admin_pb';
export type * from './gen/admin/v1/admin_pb';
export { AgentJobStatus, AgentService } from './gen/agent/v2/agent_pb';
export type * from './gen/agent/v2/agent_pb';
export { AutomationService } from './gen/agent/v2/automation_pb';
export type * from './gen/agent/v2/automation_pb';
export { AssistantService } from './gen/discovery/v2/assistant_pb';
export { AssistantService as AssistantServiceV1 } from './gen/discovery/v1/assistant_pb';
export { SearchService } from './gen/discovery/v1/search_pb';
export { Code, ConnectError } from '@connectrpc/connect';

export interface DocentClientOptions {
  /** The gateway's HTTP/1.1 base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** An admin key (agent jobs), an assistant key (assistant, search) or an operator key (admin); sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Another transport (e.g. gRPC over HTTP/2 from @connectrpc/connect-node), which then sends the key itself; default: Connect over fetch. */
  transport?: Transport;
}

export interface DocentClient {
  /** The operator API (docs/operator-api.md): an operator key, or a project's admin key for its own project. */
  admin: Client<typeof AdminService>;
  agent: Client<typeof AgentService>;
  automations: Client<typeof AutomationService>;
  assistant: Client<typeof AssistantService>;
  search: Client<typeof SearchService>;
}

/**
 * Typed clients of docent's Connect API. The default transport uses `fetch`, so the same code runs in Node 22+ and in
 * browsers (a browser page's origin must be allowed: docs/keys-and-limits.md).
 */
export function createDocentClient(options: DocentClientOptions): DocentClient {
  const bearer: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${options.apiKey}`);
    return next(req);
  };
  const transport = options.transport ?? createConnectTransport({ baseUrl: options.baseUrl.replace(/\/+$/, ''), interceptors: [bearer] });
  return {
    admin: createClient(AdminService, transport),
    agent: createClient(AgentService, transport),
    automations: createClient(AutomationService, transport),
    assistant: createClient(AssistantService, transport),
    search: createClient(SearchService, transport),
  };
}
