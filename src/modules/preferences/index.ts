import type { Module } from '../context';
import { preferenceResolvers } from './preferences.resolvers';
import { PreferenceService } from './preferences.service';

declare module '../context' {
  interface Services {
    preferences: PreferenceService;
  }
}

/** Item preferences: the stock policy per SKU, warehouse and business. */
export const preferencesModule: Module = {
  name: 'preferences',
  services: ({ db, cursors }) => ({ preferences: new PreferenceService(db, cursors) }),
  graphql: {
    schema: 'preferences.graphql',
    resolvers: [preferenceResolvers],
    mappers: { ItemPreference: './preferences.repository#ItemPreferenceRecord' },
  },
};

export { backorderPolicy } from './preferences.service';
