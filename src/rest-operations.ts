import type { RestOperation } from './kernel/rest/operation';
import { adminOperations } from './modules/auth/admin.routes';
import { proxyOperations } from './modules/proxies/proxies.routes';
import { edgeOperations } from './modules/edge/edge.routes';
import { oauthAdminOperations } from './modules/oauth/oauth-admin.routes';
import { oauthOperations } from './modules/oauth/oauth.routes';
import { searchOperations } from './modules/search/search.routes';
import { inventoryOperations } from './modules/stock/inventory.routes';

/** Every REST operation of the service, in the order `openapi.yaml` lists them. */
export const restOperations: RestOperation[] = [...adminOperations, ...proxyOperations, ...edgeOperations, ...oauthAdminOperations, ...oauthOperations, ...searchOperations, ...inventoryOperations];
