import type { RestOperation } from './kernel/rest/operation';
import { adminOperations } from './modules/auth/admin.routes';
import { proxyOperations } from './modules/proxies/proxies.routes';

/** Every REST operation of the service, in the order `openapi.yaml` lists them. */
export const restOperations: RestOperation[] = [...adminOperations, ...proxyOperations];
