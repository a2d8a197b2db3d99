import type { DescMethod, DescService } from '@bufbuild/protobuf';
import type { ConnectRouter, MethodImpl, ServiceImpl } from '@connectrpc/connect';
import type { Deps } from '../deps';
import { AdminService } from '../gen/admin/v1/admin_pb';
import { AgentService } from '../gen/agent/v2/agent_pb';
import { AutomationService } from '../gen/agent/v2/automation_pb';
import { AssistantService as AssistantServiceV1 } from '../gen/discovery/v1/assistant_pb';
import { SearchService } from '../gen/discovery/v1/search_pb';
import { AssistantService as AssistantServiceV2 } from '../gen/discovery/v2/assistant_pb';
import { isRouteAuth, type RouteAuth } from '../edge/route-auth';
import { adminHandlers, adminMethodAuth } from './admin-handlers';
import { agentHandlers, agentMethodAuth, agentMethodReadMaxBytes } from './agent-handlers';
import { automationHandlers, automationMethodAuth } from './automation-handlers';
import { assistantV1Handlers, assistantV1MethodAuth, assistantV2Handlers, assistantV2MethodAuth, searchHandlers, searchMethodAuth } from './assistant-handlers';
import type { MethodAuth } from './caller';

/** A Connect service as the gateway serves it: its handlers and the key each of its methods needs. */
export interface RpcService<S extends DescService = DescService> {
  service: S;
  auth: MethodAuth<S>;
  impl: ServiceImpl<S>;
  /** Methods whose messages may be larger than the gateway's 1 MiB (those that take images), by local name. */
  readMaxBytes?: Partial<Record<keyof ServiceImpl<S>, number>>;
}

const rpcService = <S extends DescService>(s: RpcService<S>) => s as unknown as RpcService;

/** Every Connect service of the public API. */
export function rpcServices(deps: Deps): RpcService[] {
  return [
    rpcService({ service: AgentService, auth: agentMethodAuth, impl: agentHandlers(deps), readMaxBytes: agentMethodReadMaxBytes }),
    rpcService({ service: AutomationService, auth: automationMethodAuth, impl: automationHandlers(deps) }),
    rpcService({ service: AssistantServiceV2, auth: assistantV2MethodAuth, impl: assistantV2Handlers(deps) }),
    rpcService({ service: AssistantServiceV1, auth: assistantV1MethodAuth, impl: assistantV1Handlers(deps) }),
    rpcService({ service: SearchService, auth: searchMethodAuth, impl: searchHandlers(deps) }),
    rpcService({ service: AdminService, auth: adminMethodAuth, impl: adminHandlers(deps) }),
  ];
}

/** Deadlines a client may ask for: a unary call has 5 minutes at most, a stream (a watch, an answer) an hour. */
export const maxTimeoutMs = { unary: 5 * 60_000, streaming: 60 * 60_000 };

const pathOf = (s: DescService, m: DescMethod) => `/${s.typeName}/${m.name}`;

/**
 * The Connect routes of `services` and the declared key of each method, by RPC path. A method without a declaration
 * throws here, so the gateway does not start with a method nobody decided about.
 */
export function connectRoutes(services: readonly RpcService[]): { routes: (router: ConnectRouter) => void; authOf: ReadonlyMap<string, RouteAuth> } {
  const authOf = new Map<string, RouteAuth>();
  for (const { service, auth } of services) {
    for (const m of service.methods) {
      const declared = (auth as Record<string, unknown>)[m.localName];
      if (!isRouteAuth(declared)) throw new Error(`RPC ${service.typeName}.${m.name} declares no authentication: name it in the service's MethodAuth`);
      authOf.set(pathOf(service, m), declared);
    }
  }
  const routes = (router: ConnectRouter) => {
    for (const { service, impl, readMaxBytes } of services) {
      for (const m of service.methods) {
        const handler = (impl as Record<string, MethodImpl<DescMethod>>)[m.localName]!;
        const larger = (readMaxBytes as Record<string, number> | undefined)?.[m.localName];
        router.rpc(m, handler, { maxTimeoutMs: m.methodKind === 'unary' ? maxTimeoutMs.unary : maxTimeoutMs.streaming, ...(larger ? { readMaxBytes: larger } : {}) });
      }
    }
  };
  return { routes, authOf };
}
