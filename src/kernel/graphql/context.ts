import type { Principal } from '../../modules/auth/scopes';
import type { Services } from '../../services';

/** What every resolver receives: the authenticated caller and the process's services. */
export interface GraphQLContext {
  principal: Principal;
  services: Services;
  requestId: string;
}
